import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app, handler } from '#functions/inference/list-models/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { lambdaContext, restEvent, restProxyEvent } from '../../support/events.js'
import { addUpstreamModel } from '../../support/models.js'

let caller: TestCaller

beforeAll(async () => {
  caller = await newCaller()
})

describe('GET /v1/models', () => {
  it('lists the models the caller entity may use, with W&B defaults for unset fields', async () => {
    // Prepare
    const other = await newCaller()
    const mine = await addUpstreamModel('http://127.0.0.1:9/v1', [caller.entity])
    const shared = await addUpstreamModel('http://127.0.0.1:9/v1', ['*'], {
      ownedBy: 'acme',
      created: 1_700_000_000,
      root: 'acme/base',
      maxModelLen: 8192,
    })
    const theirs = await addUpstreamModel('http://127.0.0.1:9/v1', [other.entity])

    // Act
    const res = await app.request('/v1/models', { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as { object: string; data: { id: string }[] }
    expect(body.object).toBe('list')
    const ids = body.data.map((m) => m.id)
    expect(ids).toContain(mine.id)
    expect(ids).toContain(shared.id)
    expect(ids).not.toContain(theirs.id)
    expect(body.data.find((m) => m.id === mine.id)).toEqual({
      id: mine.id,
      object: 'model',
      created: 0,
      owned_by: 'system',
      root: mine.id,
      parent: null,
      max_model_len: null,
    })
    expect(body.data.find((m) => m.id === shared.id)).toMatchObject({
      created: 1_700_000_000,
      owned_by: 'acme',
      root: 'acme/base',
      max_model_len: 8192,
    })
  })

  it.each([
    ['without a maxModelLen (the engine default)', undefined, 8192],
    ['with a maxModelLen', 300, 300],
  ])('reports the context window the reference engine enforces, %s', async (_name, maxModelLen, enforced) => {
    // Prepare
    const id = `test-org/reference-${randomUUID().slice(0, 8)}`
    const { maxModelLen: _default, ...entry } = referenceCatalogModel({ id, root: id, entities: [caller.entity] })
    await putModel(maxModelLen === undefined ? entry : { ...entry, maxModelLen })
    clearCatalogCache()

    // Act
    const listed = (await (await app.request('/v1/models', { headers: caller.bearer })).json()) as {
      data: { id: string; max_model_len: number | null }[]
    }
    const card = listed.data.find((m) => m.id === id)
    const tooLong = await chatApp.request(
      '/v1/chat/completions',
      jsonInit({ model: id, messages: [{ role: 'user', content: 'Hi' }], max_tokens: enforced }, caller.bearer),
    )

    // Assess: the card's number is the one in the engine's refusal.
    expect(card?.max_model_len).toBe(enforced)
    expect(tooLong.status).toBe(400)
    expect(((await tooLong.json()) as { error: { message: string } }).error.message).toContain(
      `the model's context length is only ${card?.max_model_len} tokens`,
    )
  })

  it('lists for the entity named by the project header, and refuses a foreign one', async () => {
    // Prepare
    const team = await newCaller()
    const teamModel = await addUpstreamModel('http://127.0.0.1:9/v1', [team.entity])

    // Act
    const own = await app.request('/v1/models', { headers: { ...team.bearer, 'OpenAI-Project': `${team.entity}/x` } })
    const foreign = await app.request('/v1/models', {
      headers: { ...caller.bearer, 'OpenAI-Project': `${team.entity}/x` },
    })

    // Assess
    expect(((await own.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain(teamModel.id)
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as { error: { type: string } }).error.type).toBe('PermissionDeniedError')
  })

  it('answers 401 without credentials', async () => {
    const res = await app.request('/v1/models', { headers: { 'x-request-id': 'rid-401' } })
    expect(res.status).toBe(401)
    expect(res.headers.get('x-request-id')).toBe('rid-401')
    expect(await res.json()).toEqual({
      error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
    })
  })

  it('serves the path with a trailing slash, and answers 405 there for another method, as on every route', async () => {
    // Act
    const bare = await app.request('/v1/models', { headers: caller.bearer })
    const slash = await app.request('/v1/models/', { headers: caller.bearer })
    const post = await app.request('/v1/models/', { method: 'POST', headers: caller.bearer })

    // Assess
    expect(slash.status).toBe(200)
    expect(await slash.json()).toEqual(await bare.json())
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET')
  })

  it('serves an API Gateway event whose path has a trailing slash through the Lambda handler', async () => {
    // Prepare: API Gateway's REST API sends `/v1/models/` to the `/v1/models` resource with the path as sent.
    const event = {
      ...restProxyEvent({ path: '/v1/models/', headers: { Authorization: caller.bearer.authorization } }),
      resource: '/v1/models',
    }

    // Act
    const result = (await handler(event as never, lambdaContext() as never)) as { statusCode: number; body: string }

    // Assess
    expect(result.statusCode).toBe(200)
    expect((JSON.parse(result.body) as { object: string }).object).toBe('list')
  })

  it('serves an API Gateway event through the Lambda handler', async () => {
    // Prepare
    const event = {
      httpMethod: 'GET',
      path: '/v1/models',
      resource: '/v1/models',
      headers: { Authorization: caller.bearer.authorization },
      multiValueHeaders: { Authorization: [caller.bearer.authorization] },
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { httpMethod: 'GET', path: '/prod/v1/models', stage: 'prod', requestId: 'r-1', identity: {} },
    }

    // Act
    const result = (await handler(event as never, {} as never)) as { statusCode: number; body: string }

    // Assess
    expect(result.statusCode).toBe(200)
    expect((JSON.parse(result.body) as { object: string }).object).toBe('list')
  })

  it('lists only the entity models through the handler behind the REST authorizer', async () => {
    // Prepare
    const mine = await addUpstreamModel('http://127.0.0.1:9/v1', [caller.entity])
    const theirs = await addUpstreamModel('http://127.0.0.1:9/v1', [(await newCaller()).entity])
    const event = restEvent({
      path: '/v1/models',
      headers: caller.bearer,
      authorizer: principalToAuthorizerContext({
        userId: caller.userId,
        keyId: caller.keyId,
        entity: caller.entity,
        entities: [caller.entity],
      }),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    const ids = (JSON.parse(result.body) as { data: { id: string }[] }).data.map((m) => m.id)
    expect(ids).toContain(mine.id)
    expect(ids).not.toContain(theirs.id)
  })
})
