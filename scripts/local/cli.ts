import { connectLocalTable } from './connect.js'

/** A small command-line tool: its usage text and one handler per command. */
export type Cli = {
  usage: string
  commands: Record<string, (rest: string[]) => Promise<void>>
}

/** Prints the message and the usage to stderr and exits with status 2. */
export function usageError(cli: Pick<Cli, 'usage'>, message: string): never {
  process.stderr.write(`${message}\n\n${cli.usage}\n`)
  process.exit(2)
}

/**
 * Runs `command` against the table the administration CLIs target (see `connectLocalTable`): `--help` or no command
 * prints the usage, an unknown command is a usage error, and the connection is always released.
 */
export async function runCli(cli: Cli, positionals: string[], help: boolean | undefined): Promise<void> {
  const [command, ...rest] = positionals
  if (help || command === undefined) {
    process.stdout.write(`${cli.usage}\n`)
    process.exit(help ? 0 : 2)
  }
  const run = cli.commands[command] ?? usageError(cli, `Unknown command '${command}'`)
  const connection = await connectLocalTable()
  try {
    await run(rest)
  } finally {
    await connection.close()
  }
}
