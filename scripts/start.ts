import { setupFailureLine } from './local/setup-error.js'
import type { RunningStack } from './local/stack.js'

// `npm start`: the whole stack in one process — its own DynamoDB (dynalite embedded, or DynamoDB Local with
// LOOM_DYNAMODB=local; none when DYNAMODB_ENDPOINT is set), tables created from the shared definition, a bootstrap
// key, and every function's routes on one port (scripts/local/stack.ts, tested in-process).

// How long requests in progress (a long stream) may take to end after a stop signal before their connections are cut.
const SHUTDOWN_GRACE_MS = 10_000

// The process that launched this one, read before anything else: under npm, the shell (see the end of the file).
const launcher = process.ppid

let stack: RunningStack
try {
  // Imported here rather than above: the settings are read (and checked) as shared/config.ts loads, and a bad one
  // is explained in one line like any other setup problem.
  const { startStack, stackOptionsFromConfig } = await import('./local/stack.js')
  stack = await startStack(stackOptionsFromConfig(), (text) => process.stdout.write(text))
} catch (error) {
  const line = setupFailureLine(error)
  // Anything unexpected keeps its stack trace.
  if (line === undefined) throw error
  process.stderr.write(`Loom: ${line}\n`)
  process.exit(1)
}

async function shutdown() {
  // Once, however many signals arrive (a terminal's Ctrl-C reaches every process of its group; supervisors repeat).
  await stack.stop(SHUTDOWN_GRACE_MS)
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)

// `npm start` runs this through `sh -c`, and a SIGTERM sent to npm (`kill` on its pid, a process manager) reaches that
// shell, which dies without passing it on: Loom would keep serving, its port and data directory held, by no one's
// process. Under npm, a parent other than the launcher (read at the very start, so a shell that died while the stack
// was starting counts too) means the shell is gone: stop as on SIGTERM. (Run directly, under nohup or a supervisor,
// the parent is left alone.)
if (process.env.npm_lifecycle_event !== undefined) {
  const watch = setInterval(() => {
    if (process.ppid === launcher) return
    clearInterval(watch)
    void shutdown()
  }, 500).unref()
}
