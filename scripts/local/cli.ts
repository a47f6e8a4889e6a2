import { type ParseArgsConfig, parseArgs } from 'node:util'
import { connectLocalTable } from './connect.js'
import { SetupError } from './setup-error.js'

/** Where a command writes: the process's stdout and stderr when run as a script, buffers in tests. */
export type CliOutput = { out: (text: string) => void; err: (text: string) => void }

/** The process's own streams. */
export const PROCESS_OUTPUT: CliOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
}

/** The options a CLI declares, in `node:util` `parseArgs` form. */
export type CliOptions = NonNullable<ParseArgsConfig['options']>

/** The values `parseArgs` reads for a CLI's options. */
export type CliValues<T extends CliOptions> = ReturnType<
  typeof parseArgs<{ options: T; allowPositionals: true }>
>['values']

/**
 * One command: its arguments, as the usage names them (`<key-id>`), the options it reads (any other argument or
 * option is refused, not silently ignored) and what it does.
 */
export type CliCommand<T extends CliOptions> = {
  args: readonly string[]
  flags: readonly (keyof T & string)[]
  run: (rest: string[], values: CliValues<T>) => Promise<void>
}

/** A small command-line tool: how it is run (`npm run keys`), its usage, its options (with `help`), its commands. */
export type Cli<T extends CliOptions> = {
  name: string
  usage: string
  options: T
  commands: Record<string, CliCommand<T>>
}

/** A mistake on the command line (a missing or bad option or argument): `runCli` answers it with status 2. */
export class UsageError extends Error {}

/** Stops the command with a usage error (the message, then the usage, on stderr; exit status 2). */
export function usageError(message: string): never {
  throw new UsageError(message)
}

/**
 * A well-formed command the data refuses (an id that names nothing, a revoked key): `runCli` answers it with the
 * message alone on stderr and status 1, since the usage would not help.
 */
export class CommandError extends Error {}

/** Stops the command with one line on stderr and exit status 1. */
export function commandError(message: string): never {
  throw new CommandError(message)
}

/**
 * Reads a flag's whole-number value from `min` (0 or 1) to `max`; anything else (a fraction, an exponent, a number
 * past `max`) stops the command with a usage error naming the range. `alternative` names another accepted word.
 */
export function intFlag(flag: string, raw: string, min: 0 | 1, max: number, alternative?: string): number {
  // Digits only: Number() also reads '1e3', '0x10' and ' ' (as 0).
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN
  if (!(value >= min && value <= max)) {
    const kind = min === 0 ? 'a non-negative integer' : 'a positive integer'
    usageError(`--${flag} must be ${kind} up to ${max}${alternative === undefined ? '' : ` or ${alternative}`}`)
  }
  return value
}

// node:util's parseArgs throws these for an unknown option, a missing or ambiguous value, a stray positional.
function isParseArgsError(error: unknown): error is Error {
  return error instanceof Error && String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')
}

/**
 * Parses `argv` and runs its command against the table the administration CLIs target (see `connectLocalTable`);
 * returns the exit status. `--help` prints the usage (0), no command prints it too (2); a malformed command line, an
 * unknown command, an option or an argument the command does not take, or a `UsageError` prints the message and the
 * usage to stderr (2); a data directory another process holds, or a `CommandError`, is one line on stderr (1). The
 * connection is always released. Other errors propagate.
 */
export async function runCli<T extends CliOptions>(cli: Cli<T>, argv: string[], output: CliOutput): Promise<number> {
  let parsed: { positionals: string[]; values: CliValues<T> }
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: cli.options }) as typeof parsed
  } catch (error) {
    if (isParseArgsError(error)) return usage(cli, output, error.message)
    throw error
  }
  const { positionals, values } = parsed
  const [command, ...rest] = positionals
  const help = (values as { help?: boolean }).help
  if (help || command === undefined) {
    output.out(`${cli.usage}\n`)
    return help ? 0 : 2
  }
  // Own properties only: `constructor` or `toString` are no commands.
  const entry = Object.hasOwn(cli.commands, command) ? cli.commands[command] : undefined
  if (entry === undefined) return usage(cli, output, `Unknown command '${command}'`)
  const stray = Object.keys(values).find((flag) => !entry.flags.includes(flag))
  if (stray !== undefined) return usage(cli, output, `'${command}' does not take --${stray}`)
  const extra = rest[entry.args.length]
  if (extra !== undefined) return usage(cli, output, unexpectedArgument(command, entry.args, extra))
  let connection: { close: () => Promise<void> }
  try {
    connection = await connectLocalTable(cli.name, output.err)
  } catch (error) {
    if (!(error instanceof SetupError)) throw error
    output.err(`Loom: ${error.message}\n`)
    return 1
  }
  try {
    await entry.run(rest, values)
    return 0
  } catch (error) {
    if (error instanceof UsageError) return usage(cli, output, error.message)
    if (error instanceof CommandError) {
      output.err(`${error.message}\n`)
      return 1
    }
    throw error
  } finally {
    await connection.close()
  }
}

function unexpectedArgument(command: string, args: readonly string[], extra: string): string {
  const takes = args.length === 0 ? 'takes no arguments, only options' : `takes ${args.join(' ')} only`
  // The usage's brackets mark what may be left out; copied with the command, they become arguments.
  const hint = /^\[|\]$/.test(extra) ? " (leave out the usage's [ ]: they mark what is optional)" : ''
  return `Unexpected argument '${extra}': '${command}' ${takes}${hint}`
}

function usage<T extends CliOptions>(cli: Cli<T>, output: CliOutput, message: string): number {
  output.err(`${message}\n\n${cli.usage}\n`)
  return 2
}
