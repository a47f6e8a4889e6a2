import { describe, expect, it } from 'vitest'
import { handler } from '#functions/auth/authorize/handler'
import { principalFromAuthorizer } from '#shared/http/authorizer-context'
import { newCaller } from '../../support/auth.js'
import { authorizerEvent, lambdaContext } from '../../support/events.js'

const invoke = (event: ReturnType<typeof authorizerEvent>) => handler(event, lambdaContext(), () => undefined)

describe('REQUEST authorizer', () => {
  it('allows a Bearer key on /v1 for the whole API and passes the principal in the context', async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const result = await invoke(authorizerEvent('/v1/chat/completions', { Authorization: caller.bearer.authorization }))

    // Assess
    expect(result?.principalId).toBe(caller.userId)
    expect(result?.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: 'arn:aws:execute-api:us-east-1:123456789012:api123/prod/*',
      },
    ])
    expect(principalFromAuthorizer(result?.context ?? undefined)).toEqual({
      userId: caller.userId,
      keyId: caller.keyId,
      entity: caller.entity,
      entities: [caller.entity],
    })
  })

  it('allows Basic api:<key> on tracing paths but not on /v1', async () => {
    const caller = await newCaller()
    const tracing = await invoke(authorizerEvent('/obj/read', { authorization: caller.basic.authorization }))
    expect(tracing?.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' })
    await expect(invoke(authorizerEvent('/v1/models', { authorization: caller.basic.authorization }))).rejects.toThrow(
      'Unauthorized',
    )
  })

  it('rejects a missing or unknown key with Unauthorized (API Gateway 401)', async () => {
    await expect(invoke(authorizerEvent('/v1/models', {}))).rejects.toThrow('Unauthorized')
    await expect(invoke(authorizerEvent('/v1/models', { authorization: 'Bearer nope' }))).rejects.toThrow(
      'Unauthorized',
    )
  })

  it('denies a project header naming a foreign entity (403)', async () => {
    const caller = await newCaller()
    const other = await newCaller()
    const result = await invoke(
      authorizerEvent('/v1/models', {
        authorization: caller.bearer.authorization,
        'OpenAI-Project': `${other.entity}/x`,
      }),
    )
    expect(result?.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' })
  })
})
