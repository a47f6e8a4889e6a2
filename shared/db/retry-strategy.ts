import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'
import { config } from '#shared/config'

// The SDK's retry interfaces, named through the client's own config type (no direct dependency on @smithy/types).
type RetryStrategyV2 = Extract<
  NonNullable<DynamoDBClientConfig['retryStrategy']>,
  { acquireInitialRetryToken: unknown }
>
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>
type RetryErrorInfo = Parameters<RetryStrategyV2['refreshRetryTokenForRetry']>[1]

// Throttling waits longer than a transient fault: the partition needs time to recover, an RPC blip does not.
const THROTTLING_FACTOR = 4

class Token implements RetryToken {
  constructor(
    private readonly count: number,
    private readonly delay: number,
  ) {}
  getRetryCount(): number {
    return this.count
  }
  getRetryDelay(): number {
    return this.delay
  }
}

/** The full-jitter backoff before retry `retry` (1-based): a random wait in [0, min(cap, base * 2^(retry-1))). */
export function backoffDelay(retry: number, baseMs: number, maxDelayMs: number): number {
  return Math.floor(Math.random() * Math.min(maxDelayMs, baseMs * 2 ** (retry - 1)))
}

/**
 * The DynamoDB client's retry strategy: throttling, 5xx and network errors are retried up to
 * `config.dynamo.maxAttempts` attempts with full-jitter exponential backoff (AWS's recommended scheme); settings are
 * read on every retry, so tests can shorten the waits without re-creating the client. Unlike the SDK's standard
 * strategy there is no process-wide retry quota: a Lambda environment serves one request at a time, and the attempts
 * of each call are bounded anyway.
 */
export const dynamoRetryStrategy: RetryStrategyV2 = {
  async acquireInitialRetryToken() {
    return new Token(0, 0)
  },
  async refreshRetryTokenForRetry(token: RetryToken, info: RetryErrorInfo) {
    const { maxAttempts, retryBaseMs, retryMaxDelayMs } = config.dynamo
    const retryable = info.errorType === 'THROTTLING' || info.errorType === 'TRANSIENT'
    const retry = token.getRetryCount() + 1
    if (!retryable || retry >= maxAttempts) throw new Error('No retry token available')
    const base = info.errorType === 'THROTTLING' ? retryBaseMs * THROTTLING_FACTOR : retryBaseMs
    let delay = backoffDelay(retry, base, retryMaxDelayMs)
    // DynamoDB may hint when to come back; honour it up to the cap.
    if (info.retryAfterHint !== undefined)
      delay = Math.max(delay, Math.min(retryMaxDelayMs, info.retryAfterHint.getTime() - Date.now()))
    return new Token(retry, delay)
  },
  recordSuccess() {},
}

/** The number of attempts the client advertises in its `amz-sdk-request` header. */
export async function dynamoMaxAttempts(): Promise<number> {
  return config.dynamo.maxAttempts
}
