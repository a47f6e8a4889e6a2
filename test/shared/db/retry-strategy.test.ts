import { afterEach, describe, expect, it } from 'vitest'
import { config } from '#shared/config'
import { backoffDelay, dynamoRetryStrategy } from '#shared/db/retry-strategy'
import { asHttpError } from '#shared/errors/error-response'
import { ServiceUnavailableError } from '#shared/errors/http-error'

const saved = { ...config.dynamo }

afterEach(() => {
  Object.assign(config.dynamo, saved)
})

function sdkError(name: string, status: number): Error {
  return Object.assign(new Error(name), {
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  })
}

describe('backoffDelay', () => {
  it('draws full-jitter waits below base * 2^(retry-1), capped', () => {
    // Act
    const draws = Array.from({ length: 2_000 }, (_, i) => [(i % 6) + 1, backoffDelay((i % 6) + 1, 50, 1_000)] as const)

    // Assess
    for (const [retry, delay] of draws) {
      expect(delay).toBeGreaterThanOrEqual(0)
      expect(delay).toBeLessThan(Math.min(1_000, 50 * 2 ** (retry - 1)))
    }
    const firstRetry = draws.filter(([r]) => r === 1).map(([, d]) => d)
    expect(new Set(firstRetry).size).toBeGreaterThan(10)
  })
})

describe('dynamoRetryStrategy', () => {
  it('retries throttling and transient errors up to maxAttempts, with a longer base for throttling', async () => {
    // Prepare
    Object.assign(config.dynamo, { maxAttempts: 3, retryBaseMs: 10, retryMaxDelayMs: 10_000 })
    const first = await dynamoRetryStrategy.acquireInitialRetryToken('')

    // Act
    const second = await dynamoRetryStrategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING' })
    const third = await dynamoRetryStrategy.refreshRetryTokenForRetry(second, { errorType: 'TRANSIENT' })
    const fourth = dynamoRetryStrategy.refreshRetryTokenForRetry(third, { errorType: 'TRANSIENT' })

    // Assess
    expect(second.getRetryCount()).toBe(1)
    expect(second.getRetryDelay()).toBeLessThan(40)
    expect(third.getRetryCount()).toBe(2)
    expect(third.getRetryDelay()).toBeLessThan(20)
    await expect(fourth).rejects.toThrow('No retry token available')
  })

  it('never retries client errors', async () => {
    // Prepare
    const first = await dynamoRetryStrategy.acquireInitialRetryToken('')

    // Act
    const refreshed = dynamoRetryStrategy.refreshRetryTokenForRetry(first, { errorType: 'CLIENT_ERROR' })

    // Assess
    await expect(refreshed).rejects.toThrow('No retry token available')
  })
})

describe('asHttpError for exhausted DynamoDB retries', () => {
  it('maps throttling, 5xx and network errors to 503 with Retry-After, and leaves other errors alone', () => {
    // Prepare
    const faults = [
      sdkError('ThrottlingException', 400),
      sdkError('ProvisionedThroughputExceededException', 400),
      sdkError('InternalServerError', 500),
      sdkError('ServiceUnavailable', 503),
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      Object.assign(new Error('timeout'), { name: 'TimeoutError' }),
      new Error('wrapped', { cause: sdkError('ThrottlingException', 400) }),
    ]

    // Act
    const mapped = faults.map(asHttpError)
    const others = [sdkError('ResourceNotFoundException', 400), new TypeError('bug')].map(asHttpError)

    // Assess
    for (const error of mapped) {
      expect(error).toBeInstanceOf(ServiceUnavailableError)
      expect(error?.headers).toEqual({ 'Retry-After': '1' })
    }
    expect(others).toEqual([undefined, undefined])
  })
})
