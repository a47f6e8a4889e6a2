import { connectLocalTable } from './connect.js'

/** Where a command writes: the process's stdout and stderr when run as a script, buffers in tests. */
export type CliOutput = { out: (text: string) => void; err: (text: string) => void }

/** The process's own streams. */
export const PROCESS_OUTPUT: CliOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
}

/** A small command-line tool: its usage text and one handler per command. */
export type Cli = {
  usage: string
  commands: Record<string, (rest: string[]) => Promise<void>>
}

/** A mistake on the command line (a missing or bad option, an unknown id): `runCli` answers it with status 2. */
export class UsageError extends Error {}

/** Stops the command with a usage error (the message, then the usage, on stderr; exit status 2). */
export function usageError(message: string): never {
  throw new UsageError(message)
}

/**
 * Runs `command` against the table the administration CLIs target (see `connectLocalTable`) and returns the exit
 * status: `--help` prints the usage (0), no command prints it too (2), an unknown command or a `UsageError` prints the
 * message and the usage to stderr (2). The connection is always released. Other errors propagate.
 */
export async function runCli(
  cli: Cli,
  positionals: string[],
  help: boolean | undefined,
  output: CliOutput,
): Promise<number> {
  const [command, ...rest] = positionals
  if (help || command === undefined) {
    output.out(`${cli.usage}\n`)
    return help ? 0 : 2
  }
  const run = cli.commands[command]
  if (run === undefined) return usage(cli, output, `Unknown command '${command}'`)
  const connection = await connectLocalTable()
  try {
    await run(rest)
    return 0
  } catch (error) {
    if (error instanceof UsageError) return usage(cli, output, error.message)
    throw error
  } finally {
    await connection.close()
  }
}

function usage(cli: Cli, output: CliOutput, message: string): number {
  output.err(`${message}\n\n${cli.usage}\n`)
  return 2
}
