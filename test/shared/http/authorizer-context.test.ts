import { describe, expect, it } from 'vitest'
import { principalFromAuthorizer, principalToAuthorizerContext } from '#shared/http/authorizer-context'

describe('authorizer context', () => {
  it('round-trips a principal through the string-only context API Gateway allows', () => {
    const principal = { userId: 'u', keyId: 'k', entity: 'e', entities: ['e', 'f'] }
    expect(principalFromAuthorizer(principalToAuthorizerContext(principal))).toEqual(principal)
  })

  it('round-trips the key limits, and leaves them out for an unlimited key', () => {
    const limited = { userId: 'u', keyId: 'k', entity: 'e', entities: ['e'], limits: { rpm: 5, concurrency: 2 } }
    const unlimited = { userId: 'u', keyId: 'k', entity: 'e', entities: ['e'] }
    expect(principalFromAuthorizer(principalToAuthorizerContext(limited))).toEqual(limited)
    expect(principalToAuthorizerContext(unlimited)).not.toHaveProperty('limits')
    expect(principalFromAuthorizer(principalToAuthorizerContext(unlimited))).not.toHaveProperty('limits')
  })

  it('yields no principal for a REST event without an authorizer (null) or with a foreign context', () => {
    expect(principalFromAuthorizer(null)).toBeUndefined()
    expect(principalFromAuthorizer(undefined)).toBeUndefined()
    expect(principalFromAuthorizer({ principalId: 'x' })).toBeUndefined()
    expect(principalFromAuthorizer({ userId: 'u', keyId: 'k', entity: 'e', entities: 'not json' })).toBeUndefined()
  })
})
