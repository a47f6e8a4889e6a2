import { describe, expect, it } from 'vitest'
import { handler } from '#functions/auth/authorize/handler'
import { handler as listModels } from '#functions/inference/list-models/handler'
import { clearAuthCache } from '#shared/auth/authenticate'
import { config } from '#shared/config'
import { principalFromAuthorizer } from '#shared/http/authorizer-context'
import { newCaller } from '../../support/auth.js'
import { authorizerEvent, lambdaContext, restEvent } from '../../support/events.js'

const invoke = (event: ReturnType<typeof authorizerEvent>) => handler(event, lambdaContext(), () => undefined)

const AUTHENTICATION_FAILED = {
  error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
}

type Decision = Awaited<ReturnType<typeof invoke>>

// What API Gateway does next: invoke the route's function with the authorizer's context (if any) in the event.
async function throughFunction(path: string, headers: Record<string, string>, decision: Decision) {
  const event = restEvent({
    method: 'GET',
    path,
    headers,
    ...(decision?.context ? { authorizer: decision.context as Record<string, string> } : {}),
  })
  const result = (await listModels(event, lambdaContext())) as unknown as {
    statusCode: number
    body: string
    multiValueHeaders?: Record<string, string[]>
  }
  return {
    status: result.statusCode,
    body: JSON.parse(result.body) as unknown,
    retryAfter: result.multiValueHeaders?.['retry-after']?.[0],
  }
}

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

  it('passes no principal for Basic on /v1, so the inference function answers its own 401', async () => {
    // Prepare
    const caller = await newCaller()
    const headers = { authorization: caller.basic.authorization }

    // Act
    const tracing = await invoke(authorizerEvent('/obj/read', headers))
    const inference = await invoke(authorizerEvent('/v1/models', headers))
    const answer = await throughFunction('/v1/models', headers, inference)

    // Assess
    expect(principalFromAuthorizer(tracing?.context ?? undefined)?.userId).toBe(caller.userId)
    expect(inference?.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' })
    expect(principalFromAuthorizer(inference?.context ?? undefined)).toBeUndefined()
    expect(answer).toEqual({ status: 401, body: AUTHENTICATION_FAILED })
  })

  it('passes no principal for a missing or unknown key; the function answers 401 in its family shape', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      // Act
      const result = await invoke(authorizerEvent('/v1/models', headers))
      const answer = await throughFunction('/v1/models', headers, result)

      // Assess
      expect(result?.context).toBeUndefined()
      expect(answer).toEqual({ status: 401, body: AUTHENTICATION_FAILED })
    }
  })

  it('lets the function refuse a project header naming a foreign entity (403), never caching a Deny', async () => {
    // Prepare
    const caller = await newCaller()
    const other = await newCaller()
    const headers = { authorization: caller.bearer.authorization, 'OpenAI-Project': `${other.entity}/x` }

    // Act
    const result = await invoke(authorizerEvent('/v1/models', headers))
    const answer = await throughFunction('/v1/models', headers, result)

    // Assess: the decision depends on the key alone (API Gateway caches it per Authorization value).
    expect(result?.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' })
    expect(answer.status).toBe(403)
    expect(answer.body).toMatchObject({ error: { type: 'PermissionDeniedError', code: 403 } })
  })

  it('passes no principal when the key look-up fails, so the function answers 503 with Retry-After', async () => {
    // Prepare: a DynamoDB endpoint nobody listens on, with fast retries.
    const caller = await newCaller()
    const headers = { authorization: caller.bearer.authorization }
    const saved = { endpoint: config.dynamoEndpoint, dynamo: { ...config.dynamo } }
    Object.assign(config.dynamo, { maxAttempts: 2, retryBaseMs: 1, retryMaxDelayMs: 5 })
    config.dynamoEndpoint = 'http://127.0.0.1:9'
    clearAuthCache()
    try {
      // Act
      const result = await invoke(authorizerEvent('/v1/models', headers))
      const answer = await throughFunction('/v1/models', headers, result)

      // Assess
      expect(result?.context).toBeUndefined()
      expect(answer.status).toBe(503)
      expect(answer.retryAfter).toMatch(/^\d+$/)
      expect(answer.body).toMatchObject({ error: { type: 'ServiceUnavailableError', code: 503 } })
    } finally {
      config.dynamoEndpoint = saved.endpoint
      Object.assign(config.dynamo, saved.dynamo)
    }
  })
})
