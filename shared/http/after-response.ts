const pending = new Set<Promise<void>>()

/**
 * Keeps work that must not delay a response (a completion's trace) alive until the Lambda handler has ended its
 * response: a frozen Lambda environment would otherwise hold it half-done until the next invocation, or lose it. On the
 * long-running local server nothing waits: the work simply runs on. Failures are the work's own to log.
 */
export function afterResponse(work: Promise<unknown>): void {
  const tracked: Promise<void> = work.then(
    () => undefined,
    () => undefined,
  )
  pending.add(tracked)
  void tracked.finally(() => pending.delete(tracked))
}

/** Resolves once every piece of work handed to `afterResponse` (including work it started meanwhile) has settled. */
export async function settleAfterResponse(): Promise<void> {
  while (pending.size > 0) await Promise.all(pending)
}
