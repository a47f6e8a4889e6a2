/**
 * Reads `read` until `done` accepts what it returned, then returns that value; after `timeoutMs` returns the last
 * value read, for the test's own assertion to fail on. For effects that land after an answer (a cancelled stream's
 * metering, an upstream noticing a closed socket): a fixed sleep fails when the machine is busy.
 */
export async function until<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() >= deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
