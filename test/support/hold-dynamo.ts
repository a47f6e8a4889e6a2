import { rawDb } from '#shared/db/client'

/** What a held DynamoDB command is, for choosing which to hold: its command name and its (marshalled) input. */
export type HeldCommand = { name: string; input: Record<string, unknown> }

/**
 * Holds the DynamoDB commands `match` picks (any code path sending them waits) until `release`, so a test can order a
 * race exactly instead of hoping for a timing: `arrived(n)` resolves once `n` have arrived, `count()` says how many
 * did; `stop` removes the hold (call it in `finally`, after `release`).
 */
export function holdDynamoCommands(match: (command: HeldCommand) => boolean) {
  let count = 0
  const waiters: { n: number; resolve: () => void }[] = []
  let release: () => void = () => undefined
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const name = `hold-dynamo-commands-${Math.random().toString(36).slice(2)}`
  rawDb().middlewareStack.add(
    (next, context) => async (args) => {
      if (!match({ name: String(context.commandName), input: args.input as Record<string, unknown> })) return next(args)
      count++
      for (const w of waiters) if (count >= w.n) w.resolve()
      await gate
      return next(args)
    },
    { step: 'initialize', name },
  )
  return {
    arrived: (n = 1) =>
      new Promise<void>((resolve) => {
        if (count >= n) resolve()
        else waiters.push({ n, resolve })
      }),
    count: () => count,
    release,
    stop: () => {
      release()
      rawDb().middlewareStack.remove(name)
    },
  }
}

/**
 * Watches the DynamoDB commands `match` picks without holding them: `max()` is the most that were in flight at once
 * (sent, not yet answered); `stop` removes the watch (call it in `finally`).
 */
export function watchDynamoInFlight(match: (command: HeldCommand) => boolean) {
  let inFlight = 0
  let max = 0
  const name = `watch-dynamo-in-flight-${Math.random().toString(36).slice(2)}`
  rawDb().middlewareStack.add(
    (next, context) => async (args) => {
      if (!match({ name: String(context.commandName), input: args.input as Record<string, unknown> })) return next(args)
      inFlight++
      max = Math.max(max, inFlight)
      try {
        return await next(args)
      } finally {
        inFlight--
      }
    },
    { step: 'initialize', name },
  )
  return { max: () => max, stop: () => rawDb().middlewareStack.remove(name) }
}
