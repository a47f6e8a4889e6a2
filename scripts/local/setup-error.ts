// No import of shared/config here: scripts/start.ts loads this module first, to explain a bad setting that stops
// shared/config.ts from loading at all.

/**
 * A problem with the local setup that one line explains (a busy port or data directory, an unusable file, a missing
 * Java): `npm start` and the CLIs print its message without a stack trace and exit with status 1.
 */
export class SetupError extends Error {}

// What shared/config.ts throws for a bad or missing setting: `<NAME> environment variable must be …` / `is not set`.
const SETTING_ERROR = /^[A-Z][A-Z0-9_]* environment variable /

/**
 * The one line that explains why the local stack could not start, for a `SetupError` or a rejected setting; undefined
 * for anything unexpected, whose stack trace is worth printing.
 */
export function setupFailureLine(error: unknown): string | undefined {
  if (error instanceof SetupError) return error.message
  if (error instanceof Error && SETTING_ERROR.test(error.message)) return error.message
  return undefined
}

/** The setup error for a server that cannot listen on `host:port` (a port in use or privileged, no such address). */
export function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `port ${port} on ${host}`
  switch (error.code) {
    case 'EADDRINUSE':
      return new SetupError(`${where} is in use (set PORT to another port, or stop what listens there)`, {
        cause: error,
      })
    case 'EACCES':
      return new SetupError(`${where} needs privileges this process lacks (set PORT to 1024 or above)`, {
        cause: error,
      })
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new SetupError(`${host} is not an address of this machine (set HOST, e.g. 127.0.0.1)`, { cause: error })
    default:
      return error
  }
}
