import { afterEach, describe, expect, it, vi } from 'vitest'
import { upstreamError } from '#shared/inference/upstream-errors'
import { logger } from '#shared/logger'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('an upstream that refuses the gateway', () => {
  it("is a 500 for the caller and logs the upstream's own message under a key the logger keeps", () => {
    // Prepare: Powertools drops an attribute named `message` (a reserved key) with a warning of its own
    const logged = vi.spyOn(logger, 'error')

    // Act
    const error = upstreamError(401, JSON.stringify({ error: { message: 'Incorrect API key provided' } }))

    // Assess
    expect(error).toMatchObject({ statusCode: 500, message: 'The server had an error while processing your request' })
    expect(logged).toHaveBeenCalledWith('upstream refused the gateway', {
      status: 401,
      upstreamMessage: 'Incorrect API key provided',
    })
  })
})
