import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { config } from '#shared/config'

const run = promisify(execFile)

/** What a CLI run printed and how it exited. */
export type CliResult = { code: number; stdout: string; stderr: string }

/** Runs one of the project's CLI scripts (`scripts/<name>.ts`) against the test file's table, as `npm run` would. */
export async function runCli(script: string, ...args: string[]): Promise<CliResult> {
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
