import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { addTokens, windowOf } from '#shared/db/rate-limit-repository'
import { TooManyRequestsError } from '#shared/errors/http-error'
import {
  admit,
  CONCURRENCY_MESSAGE,
  chargeTokens,
  keyScope,
  projectModelScope,
  REQUEST_RATE_MESSAGE,
  TOKEN_RATE_MESSAGE,
} from '#shared/limits/limiter'

const scope = () => `TEST#${randomUUID()}`

async function refusal(promise: Promise<unknown>): Promise<TooManyRequestsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TooManyRequestsError)
  return error as TooManyRequestsError
}

describe('admit', () => {
  it('refuses the request over rpm with Retry-After up to the end of the window', async () => {
    // Prepare
    const s = scope()
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000
    const now = windowStart + 45_200
    await admit([{ scope: s, rpm: 1 }], now)

    // Act
    const error = await refusal(admit([{ scope: s, rpm: 1 }], now))

    // Assess
    expect(error.statusCode).toBe(429)
    expect(error.message).toBe(REQUEST_RATE_MESSAGE)
    expect(error.headers).toEqual({ 'Retry-After': '15' })
  })

  it('refuses once the window holds tpm tokens, with or without an rpm', async () => {
    // Prepare
    const s = scope()
    const now = Math.floor(Date.now() / 60_000) * 60_000 + 59_900
    await chargeTokens([s], 100, now)

    // Act
    const tpmOnly = await refusal(admit([{ scope: s, tpm: 100 }], now))
    const withRpm = await refusal(admit([{ scope: s, rpm: 10, tpm: 100 }], now))
    const underBudget = await admit([{ scope: s, tpm: 101 }], now)

    // Assess
    expect(tpmOnly.message).toBe(TOKEN_RATE_MESSAGE)
    expect(withRpm.message).toBe(TOKEN_RATE_MESSAGE)
    expect(tpmOnly.headers).toEqual({ 'Retry-After': '1' })
    expect(underBudget).toBeTypeOf('function')
  })

  it('refuses over concurrency with W&B message and frees every slot it took when another check refuses', async () => {
    // Prepare
    const busy = scope()
    const other = scope()
    const held = await admit([{ scope: busy, concurrency: 1 }])

    // Act
    const concurrency = await refusal(admit([{ scope: busy, concurrency: 1 }]))
    const mixed = await refusal(
      admit([
        { scope: other, concurrency: 1 },
        { scope: busy, concurrency: 1 },
      ]),
    )
    const otherFree = await admit([{ scope: other, concurrency: 1 }])
    await held()
    const busyFree = await admit([{ scope: busy, concurrency: 1 }])

    // Assess
    expect(concurrency.message).toBe(CONCURRENCY_MESSAGE)
    expect(concurrency.headers).toEqual({ 'Retry-After': '1' })
    expect(mixed.message).toBe(CONCURRENCY_MESSAGE)
    expect(otherFree).toBeTypeOf('function')
    expect(busyFree).toBeTypeOf('function')
  })

  it('charges tokens to every scope given, and nothing for an empty completion', async () => {
    // Prepare
    const a = scope()
    const b = scope()
    const now = Date.now()

    // Act
    await chargeTokens([a, b], 7, now)
    await chargeTokens([a], 0, now)
    await addTokens(b, windowOf(now), 3)

    // Assess
    await refusal(admit([{ scope: a, tpm: 7 }], now))
    await refusal(admit([{ scope: b, tpm: 10 }], now))
    expect(await admit([{ scope: a, tpm: 8 }], now)).toBeTypeOf('function')
  })
})

describe('scopes', () => {
  it('keeps key and project-model scopes apart, and a # in a name cannot merge two scopes', () => {
    expect(keyScope('abc')).toBe('KEY#abc')
    expect(projectModelScope('m#x', 'e/p')).not.toBe(projectModelScope('x', 'e/p#m'))
    expect(projectModelScope('org/model', 'team/proj')).toBe('PROJMODEL#team%2Fproj#org%2Fmodel')
  })
})
