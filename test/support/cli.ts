import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { config } from '#shared/config'
import type { CliOutput } from '../../scripts/local/cli.js'

const run = promisify(execFile)

/** What a CLI run printed and how it exited. */
export type CliResult = { code: number; stdout: string; stderr: string }

/** A CLI's entry function (`keysCli`, `modelsCli`): the arguments after the script name, in; the exit status, out. */
export type CliMain = (argv: string[], output: CliOutput) => Promise<number>

/** Runs a CLI in this process against the test file's table (test/setup.ts points `config` at it). */
export async function runCli(main: CliMain, ...args: string[]): Promise<CliResult> {
  const printed = { stdout: '', stderr: '' }
  const code = await main(args, {
    out: (text) => {
      printed.stdout += text
    },
    err: (text) => {
      printed.stderr += text
    },
  })
  return { code, ...printed }
}

/** Runs one of the project's CLI scripts (`scripts/<name>.ts`) in a child process against the test file's table. */
export async function spawnCli(script: string, ...args: string[]): Promise<CliResult> {
  const env = {
    ...process.env,
    DYNAMODB_ENDPOINT: config.dynamoEndpoint ?? '',
    LOOM_TABLE_NAME: config.tableName ?? '',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  }
  try {
    const { stdout, stderr } = await run(join(process.cwd(), 'node_modules/.bin/tsx'), [script, ...args], { env })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}
