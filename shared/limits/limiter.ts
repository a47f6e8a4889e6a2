import { randomUUID } from 'node:crypto'
import { config } from '#shared/config'
import { keyPart } from '#shared/db/key-part'
import {
  addTokens,
  claimSlot,
  countRequest,
  readWindow,
  releaseSlot,
  type Slot,
  windowOf,
} from '#shared/db/rate-limit-repository'
import { TooManyRequestsError } from '#shared/errors/http-error'
import { logger } from '#shared/logger'

/** W&B's message for too many requests in flight (docs/inference.md §4.4). */
export const CONCURRENCY_MESSAGE = 'Concurrency limit reached for requests'
/** The rate equivalents of W&B's concurrency message. */
export const REQUEST_RATE_MESSAGE = 'Rate limit reached for requests'
export const TOKEN_RATE_MESSAGE = 'Rate limit reached for tokens'

// A slot frees when a request in flight ends, which is usually well within a second or two.
const CONCURRENCY_RETRY_AFTER_S = 1

/** One set of limits on one scope (a key, or a model used by a project). */
export type LimitCheck = {
  scope: string
  rpm?: number | undefined
  tpm?: number | undefined
  concurrency?: number | undefined
}

/** Frees what an admitted request holds (its concurrency slots); safe to call more than once. */
export type Release = () => Promise<void>

/** The limiter scope of an API key. */
export function keyScope(keyId: string): string {
  return `KEY#${keyId}`
}

/** The limiter scope of a catalog model used by one project (`<entity>/<project>`): W&B limits per project. */
export function projectModelScope(modelId: string, projectId: string): string {
  // Encoded so a `#` in a project or model name cannot make two scopes collide.
  return `PROJMODEL#${keyPart(encodeURIComponent(projectId))}#${keyPart(encodeURIComponent(modelId))}`
}

function rateError(message: string, endsAt: number, now: number): TooManyRequestsError {
  const seconds = Math.max(1, Math.ceil((endsAt - now) / 1000))
  return new TooManyRequestsError(message, { headers: { 'Retry-After': String(seconds) } })
}

async function checkRate(check: LimitCheck, now: number): Promise<void> {
  const window = windowOf(now)
  const { rpm, tpm } = check
  if (rpm === undefined && tpm === undefined) return
  // With an rpm the request is counted and both limits are checked by one conditional write; a tpm alone is a read.
  const refused =
    rpm === undefined ? await readWindow(check.scope, window) : await countRequest(check.scope, window, check)
  if (refused === undefined) return
  if (tpm !== undefined && refused.tokens >= tpm) throw rateError(TOKEN_RATE_MESSAGE, window.endsAt, now)
  if (rpm !== undefined && refused.requests >= rpm) throw rateError(REQUEST_RATE_MESSAGE, window.endsAt, now)
  // A tpm-only read that found budget left, or a refusal whose counts moved on before the read: admitted.
}

async function takeSlot(check: LimitCheck, now: number): Promise<Slot | undefined> {
  if (check.concurrency === undefined) return undefined
  const slot = await claimSlot(check.scope, check.concurrency, randomUUID(), now, config.concurrencyLeaseMs)
  if (slot === undefined) {
    throw new TooManyRequestsError(CONCURRENCY_MESSAGE, {
      headers: { 'Retry-After': String(CONCURRENCY_RETRY_AFTER_S) },
    })
  }
  return slot
}

function releaser(slots: Slot[]): Release {
  let pending: Promise<void> | undefined
  return () => {
    pending ??= Promise.all(
      slots.map((slot) =>
        releaseSlot(slot).catch((error: unknown) => {
          // The lease frees the slot anyway once it runs out.
          logger.warn('concurrency slot release failed', { error })
        }),
      ),
    ).then(() => undefined)
    return pending
  }
}

/**
 * Admits a request under every check at once (rates counted, slots claimed, all in parallel) or throws 429 with
 * `Retry-After`, freeing any slot it had claimed. Returns the release of the claimed slots.
 */
export async function admit(checks: LimitCheck[], now = Date.now()): Promise<Release> {
  const [rates, slots] = await Promise.all([
    Promise.allSettled(checks.map((check) => checkRate(check, now))),
    Promise.allSettled(checks.map((check) => takeSlot(check, now))),
  ])
  const release = releaser(slots.flatMap((s) => (s.status === 'fulfilled' && s.value !== undefined ? [s.value] : [])))
  const failed = [...rates, ...slots].find((s) => s.status === 'rejected')
  if (failed !== undefined) {
    await release()
    throw failed.reason
  }
  return release
}

/** Adds a finished completion's tokens to each scope's current window; failures are logged, never thrown. */
export async function chargeTokens(scopes: string[], tokens: number, now = Date.now()): Promise<void> {
  if (tokens <= 0 || scopes.length === 0) return
  const window = windowOf(now)
  await Promise.all(
    scopes.map((scope) =>
      addTokens(scope, window, tokens).catch((error: unknown) => {
        logger.warn('token charge failed', { error, scope })
      }),
    ),
  )
}
