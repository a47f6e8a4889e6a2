import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb'
import { Stack } from 'aws-cdk-lib'
import { Table } from 'aws-cdk-lib/aws-dynamodb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handler as authorize } from '#functions/auth/authorize/handler'
import { FUNCTIONS, type FunctionEntry, type RouteEntry } from '#functions/manifest'
import { clearAuthCache } from '#shared/auth/authenticate'
import { tableName } from '#shared/config'
import { db, table } from '#shared/db/client'
import { settleAfterResponse } from '#shared/http/after-response'
import { flushUsage } from '#shared/inference/usage-meter'
import { keyScope, projectModelScope } from '#shared/limits/limiter'
import { ApiStack } from '../../infra/api-stack.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { testApp } from '../support/cdk.js'
import { type DynamoFaultProxy, startDynamoFaultProxy } from '../support/dynamo-fault-proxy.js'
import { authorizerEvent, lambdaContext } from '../support/events.js'
import {
  accessesOf,
  type DynamoAccess,
  dynamoStatements,
  evaluate,
  functionPolicies,
  type PolicyStatement,
  tableArn,
} from '../support/iam-policy.js'
import { addUpstreamModel } from '../support/models.js'
import {
  buildFixtures,
  callRoute,
  type Fixtures,
  probe,
  probeName,
  projectProbes,
  type RouteProbe,
} from '../support/route-probes.js'
import { trajectory } from '../support/training.js'
import { startVllmUpstream } from '../support/vllm-upstream.js'

// Every function runs against a DynamoDB proxy that enforces the execution-role policy CDK synthesizes for it: each
// request's action, table or index ARN and partition keys are judged by IAM's rules, and what the role does not allow
// is refused with DynamoDB's AccessDeniedException. The caller's key has `rpm` and `concurrency` set, so every
// authenticated function also runs the limiter's writes. A grant the code outgrows fails here, not in production.

const AUTHORIZER_ID = 'auth/authorize'

/** The API stack synthesized (bundling skipped) against this file's table, and each function's role statements. */
function synthesizedPolicies(): Map<string, PolicyStatement[]> {
  const app = testApp()
  const table = Table.fromTableArn(new Stack(app, 'Data'), 'Table', tableArn(tableName()))
  new ApiStack(app, 'Api', { table })
  return functionPolicies(app.synth().directory)
}

const policies = synthesizedPolicies()

/** One DynamoDB request of a function as the proxy judged it. */
type Judged = DynamoAccess & { allowed: boolean; reason: string }

/** A guard that judges each request under `statements` and records every verdict. */
function enforce(statements: PolicyStatement[], judged: Judged[]) {
  return (operation: string, body: Record<string, unknown>) => {
    let verdicts: Judged[]
    try {
      verdicts = accessesOf(operation, body).map((access) => ({ ...access, ...evaluate(statements, access) }))
    } catch (error) {
      // A request or policy the proxy cannot judge is refused and reported, never let through unjudged.
      const reason = `not evaluated: ${(error as Error).message}`
      judged.push({ action: `dynamodb:${operation}`, resource: '?', leadingKeys: [], allowed: false, reason })
      return reason
    }
    judged.push(...verdicts)
    const denied = verdicts.find((v) => !v.allowed)
    return denied === undefined
      ? undefined
      : `User is not authorized to perform: ${denied.action} on resource: ${denied.resource} because ${denied.reason}`
  }
}

const describeDenied = (judged: Judged[]) =>
  judged.filter((j) => !j.allowed).map((j) => `${j.action} ${j.resource} [${j.leadingKeys.join(', ')}]: ${j.reason}`)

// Destructive requests run after the requests that read or change what they delete.
const destructive = (entry: FunctionEntry) => /\/(delete|purge)-/.test(entry.id)
const ordered = [...FUNCTIONS.filter((e) => !destructive(e)), ...FUNCTIONS.filter(destructive)]

const LIMITS = { rpm: 10_000, concurrency: 3 }

let caller: TestCaller
let fixtures: Fixtures
let model: string
let proxy: DynamoFaultProxy
let restoreEndpoint: () => void
beforeAll(async () => {
  // The data the requests address is built directly in the table, before any policy applies.
  const upstream = await startVllmUpstream()
  afterAll(() => upstream.close())
  caller = await newCaller(undefined, LIMITS)
  fixtures = await buildFixtures(caller)
  // A model with its own per-project limits, so the completion also runs the limiter on the model's scope.
  model = (await addUpstreamModel(upstream.baseUrl, [caller.entity], { rpm: 10_000, tpm: 1_000_000, concurrency: 3 }))
    .id
  proxy = await startDynamoFaultProxy()
  restoreEndpoint = proxy.use()
})
afterAll(async () => {
  restoreEndpoint()
  await proxy.close()
})

/** A representative valid request for each declared route (two for chat completions: buffered and streamed). */
function probes(): RouteProbe[] {
  const f = fixtures
  const modelParams = { model_id: f.modelId }
  const chat = probe('inference/create-chat-completion', {
    headers: { 'compat-project': f.project },
    body: { model, messages: [{ role: 'user', content: 'hello big world' }], max_tokens: 4 },
  })
  return [
    ...projectProbes(f, caller.entity).filter((p) => p.route !== chat.route),
    probe('meta/get-health'),
    probe('meta/get-openapi'),
    probe('meta/get-server-info'),
    probe('tracing/list-projects'),
    probe('meta/get-console', {}, 0),
    probe('meta/get-console', {}, 1),
    probe('meta/get-console', { params: { file: '' } }, 2),
    probe('training/get-model-metrics', { params: modelParams }),
    probe('training/log-trajectories', {
      params: modelParams,
      body: { trajectory_groups: [{ trajectories: [trajectory(2)] }], split: 'train', step: 2 },
    }),
    probe('training/list-checkpoints', { params: modelParams, query: { limit: '1', order: 'desc' } }),
    probe('training/delete-checkpoints', { params: modelParams, body: { steps: [1] } }),
    probe('training/delete-preview-model', { params: modelParams }),
    // A delete that reaches a call: its deletion marker, mark and uncount are judged too (destructive ones run last).
    {
      ...probe('tracing/delete-calls', { body: { project_id: f.project, call_ids: [f.callId] } }),
      variant: 'an existing call',
    },
    // Buffered and streamed: the stream releases its slots and meters its usage after the last byte.
    chat,
    { ...chat, probe: { ...chat.probe, body: { ...(chat.probe.body as object), stream: true } }, variant: 'stream' },
  ]
}

/** Runs `act` with the proxy enforcing the function's policy; returns every request it judged. */
async function underPolicy(functionId: string, act: () => Promise<void>): Promise<Judged[]> {
  const statements = policies.get(functionId)
  if (statements === undefined) throw new Error(`no synthesized role for ${functionId}`)
  const judged: Judged[] = []
  // Key look-ups are cached per process: cleared, so each function reads the key through its own policy.
  clearAuthCache()
  proxy.guard(enforce(statements, judged))
  try {
    await act()
    // Work that outlives the response (slot releases of streams, usage flushes) is the function's too.
    await settleAfterResponse()
    await flushUsage()
  } finally {
    proxy.guard(undefined)
  }
  return judged
}

describe('each function against a DynamoDB proxy enforcing its synthesized execution-role policy', () => {
  it('finds one role per manifest function and the authorizer, with table statements only where the manifest says', () => {
    // Assess
    expect([...policies.keys()].sort()).toEqual([...FUNCTIONS.map((f) => f.id), AUTHORIZER_ID].sort())
    for (const entry of FUNCTIONS) {
      const onTable = dynamoStatements(policies.get(entry.id) ?? [])
      expect(onTable.length > 0, entry.id).toBe(entry.access !== 'none' || entry.auth)
    }
    // The authorizer runs no limiter: it reads keys and writes nothing.
    const authorizerActions = dynamoStatements(policies.get(AUTHORIZER_ID) ?? []).flatMap((s) =>
      [s.Action ?? []].flat(),
    )
    expect(authorizerActions).toContain('dynamodb:GetItem')
    expect(authorizerActions.filter((a) => /Put|Update|Delete|Write/.test(a))).toEqual([])
  })

  it.each(ordered.map((entry) => [entry.id, entry] as const))(
    '%s serves a rate-limited key with no denied DynamoDB call',
    async (_id, entry) => {
      // Prepare
      const all = probes().filter((p) => (entry.routes as readonly RouteEntry[]).includes(p.route))
      const unprobed = entry.routes.filter((r) => !all.some((p) => p.route === r))
      expect(unprobed, `a probe for every route of ${entry.id}`).toEqual([])
      const statuses: string[] = []

      // Act
      const judged = await underPolicy(entry.id, async () => {
        for (const p of all) {
          const res = await callRoute(caller, p.probe, entry)
          // A valid request succeeds: 2xx, or the console's redirect to itself.
          const ok = res.status >= 200 && res.status < 400
          statuses.push(`${probeName(p)} → ${ok ? 'ok' : `${res.status} ${res.text.slice(0, 300)}`}`)
        }
      })

      // Assess
      expect(describeDenied(judged)).toEqual([])
      expect(statuses).toEqual(all.map((p) => `${probeName(p)} → ok`))
      if (entry.auth) {
        // The limiter ran through the proxy: counted the request, claimed a slot and released it.
        const scope = keyScope(caller.keyId)
        const limiter = judged
          .filter((j) => j.leadingKeys.some((k) => k === `RATE#${scope}` || k === `SLOT#${scope}`))
          .map((j) => `${j.action} ${j.leadingKeys.join(',')}`)
        expect(new Set(limiter)).toEqual(
          new Set([
            `dynamodb:UpdateItem RATE#${scope}`,
            `dynamodb:PutItem SLOT#${scope}`,
            `dynamodb:DeleteItem SLOT#${scope}`,
          ]),
        )
      } else {
        expect(judged).toEqual([])
      }
    },
  )

  it('auth/authorize resolves the rate-limited key with no denied DynamoDB call', async () => {
    // Act
    let decision: Awaited<ReturnType<typeof authorize>> | undefined
    const judged = await underPolicy(AUTHORIZER_ID, async () => {
      decision = await authorize(authorizerEvent('/call/read', caller.bearer), lambdaContext(), () => undefined)
    })

    // Assess
    expect(describeDenied(judged)).toEqual([])
    expect(judged.length).toBeGreaterThan(0)
    expect(decision?.principalId).toBe(caller.userId)
    expect(decision?.policyDocument.Statement[0]?.Effect).toBe('Allow')
  })
})

describe("a read-only function's role through the same proxy", () => {
  // What the SDK answers for one request under tracing/read-obj's policy: 'ok' or the error's name.
  const attempt = async (send: () => Promise<unknown>) => {
    let outcome = 'ok'
    await underPolicy('tracing/read-obj', async () => {
      outcome = await send().then(
        () => 'ok',
        (error: Error) => error.name,
      )
    })
    return outcome
  }
  const put = (pk: string) => () => db().send(new PutCommand({ TableName: table(), Item: { PK: pk, SK: 'S#00000' } }))

  it("may write its caller's limiter items and nothing else", async () => {
    // Act
    const outcomes = {
      rate: await attempt(put(`RATE#${keyScope('k1')}`)),
      slot: await attempt(put(`SLOT#${keyScope('k1')}`)),
      release: await attempt(() =>
        db().send(new DeleteCommand({ TableName: table(), Key: { PK: `SLOT#${keyScope('k1')}`, SK: 'S#00000' } })),
      ),
      modelScope: await attempt(put(`SLOT#${projectModelScope('m', 'e/p')}`)),
      data: await attempt(put(`OBJ#${caller.entity}/p`)),
      apiKey: await attempt(put(`APIKEY#${caller.keyId}`)),
      lookalike: await attempt(put(`XRATE#${keyScope('k1')}`)),
      indexRead: await attempt(() =>
        db().send(
          new QueryCommand({
            TableName: table(),
            IndexName: 'GSI1',
            KeyConditionExpression: 'GSI1PK = :pk',
            ExpressionAttributeValues: { ':pk': 'none' },
          }),
        ),
      ),
    }

    // Assess
    expect(outcomes).toEqual({
      rate: 'ok',
      slot: 'ok',
      release: 'ok',
      modelScope: 'AccessDeniedException',
      data: 'AccessDeniedException',
      apiKey: 'AccessDeniedException',
      lookalike: 'AccessDeniedException',
      indexRead: 'ok',
    })
  })
})

describe("a writing function's role through the same proxy", () => {
  // What the SDK answers for one request under tracing/create-obj's policy: 'ok' or the error's name.
  const attempt = async (send: () => Promise<unknown>) => {
    let outcome = 'ok'
    await underPolicy('tracing/create-obj', async () => {
      outcome = await send().then(
        () => 'ok',
        (error: Error) => error.name,
      )
    })
    return outcome
  }
  const item = (pk: string) => ({ PK: pk, SK: 'DENY-PROBE' })
  const put = (pk: string) => () => db().send(new PutCommand({ TableName: table(), Item: item(pk) }))

  it('writes its own items but no key record, membership, catalog model or one-time marker, not even in a batch', async () => {
    // Act
    const outcomes = {
      own: await attempt(put(`OBJ#${caller.entity}/p#deny-probe`)),
      usage: await attempt(put(`USAGE#${caller.entity}`)),
      previewModel: await attempt(put('PMODEL#deny-probe')),
      apiKey: await attempt(put('APIKEY#x')),
      apiKeyUpdate: await attempt(() =>
        db().send(
          new UpdateCommand({
            TableName: table(),
            Key: { PK: `APIKEY#${caller.keyId}`, SK: 'APIKEY' },
            UpdateExpression: 'SET revokedAt = :at',
            ExpressionAttributeValues: { ':at': 'now' },
          }),
        ),
      ),
      apiKeyDelete: await attempt(() =>
        db().send(new DeleteCommand({ TableName: table(), Key: { PK: `APIKEY#${caller.keyId}`, SK: 'APIKEY' } })),
      ),
      membership: await attempt(put(`USER#${caller.userId}`)),
      catalog: await attempt(put('MODELS')),
      marker: await attempt(put('MARKER#first-key')),
      batchWithAKey: await attempt(() =>
        db().send(
          new BatchWriteCommand({
            RequestItems: {
              [table()]: [
                { PutRequest: { Item: item('OBJ#batch-probe') } },
                { PutRequest: { Item: item('APIKEY#x') } },
              ],
            },
          }),
        ),
      ),
    }

    // Assess
    expect(outcomes).toEqual({
      own: 'ok',
      usage: 'ok',
      previewModel: 'ok',
      apiKey: 'AccessDeniedException',
      apiKeyUpdate: 'AccessDeniedException',
      apiKeyDelete: 'AccessDeniedException',
      membership: 'AccessDeniedException',
      catalog: 'AccessDeniedException',
      marker: 'AccessDeniedException',
      batchWithAKey: 'AccessDeniedException',
    })
    // The key record is untouched: the update and delete never reached the table.
    const { Item } = await db().send(
      new GetCommand({ TableName: table(), Key: { PK: `APIKEY#${caller.keyId}`, SK: 'APIKEY' } }),
    )
    expect(Item?.revokedAt).toBeUndefined()
  })

  it('writes nothing through an index', async () => {
    // Prepare
    const statements = policies.get('tracing/create-obj') ?? []
    const onIndex = (action: string) => ({
      action,
      resource: `${tableArn(tableName())}/index/GSI1`,
      leadingKeys: ['OBJ#p'],
    })

    // Assess
    expect(evaluate(statements, onIndex('dynamodb:Query')).allowed).toBe(true)
    for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'])
      expect(evaluate(statements, onIndex(action)).allowed, action).toBe(false)
  })
})

describe('the IAM evaluator behind the proxy', () => {
  const arn = tableArn('t')
  const allow = (extra: Partial<PolicyStatement>): PolicyStatement => ({
    Effect: 'Allow',
    Action: ['dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:Query'],
    Resource: arn,
    ...extra,
  })
  const batch = (...pks: string[]) =>
    accessesOf('BatchWriteItem', {
      RequestItems: { t: pks.map((pk) => ({ PutRequest: { Item: { PK: { S: pk }, SK: { S: 'x' } } } })) },
    })[0] as DynamoAccess
  const verdict = (statements: PolicyStatement[], access: DynamoAccess) => evaluate(statements, access).allowed

  it('reads the partition keys a request touches, on the table or the index it names', () => {
    // Assess
    expect(batch('A#1', 'B#2')).toEqual({
      action: 'dynamodb:BatchWriteItem',
      resource: arn,
      leadingKeys: ['A#1', 'B#2'],
    })
    expect(
      accessesOf('Query', {
        TableName: 't',
        IndexName: 'GSI2',
        KeyConditionExpression: '#pk = :pk AND begins_with(GSI2SK, :sk)',
        ExpressionAttributeNames: { '#pk': 'GSI2PK' },
        ExpressionAttributeValues: { ':pk': { S: 'P#1' }, ':sk': { S: 'x' } },
      }),
    ).toEqual([{ action: 'dynamodb:Query', resource: `${arn}/index/GSI2`, leadingKeys: ['P#1'] }])
  })

  it('judges as IAM does: set operators on LeadingKeys, wildcards, index ARNs and Deny before Allow', () => {
    // Prepare
    const all = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*'] } }
    const any = { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['A#?'] } }
    const query = { action: 'dynamodb:Query', leadingKeys: ['P#1'] }

    // Assess
    expect(verdict([allow({ Condition: all })], batch('A#1', 'A#22'))).toBe(true)
    expect(verdict([allow({ Condition: all })], batch('A#1', 'B#2'))).toBe(false)
    expect(verdict([allow({ Condition: any })], batch('A#1', 'B#2'))).toBe(true)
    expect(verdict([allow({ Condition: any })], batch('A#22'))).toBe(false)
    expect(verdict([allow({})], { ...query, resource: `${arn}/index/GSI1` })).toBe(false)
    expect(verdict([allow({ Resource: `${arn}/index/*` })], { ...query, resource: `${arn}/index/GSI1` })).toBe(true)
    expect(verdict([allow({ Action: 'dynamodb:*' })], { ...query, resource: arn })).toBe(true)
    expect(verdict([allow({ Action: 'dynamodb:Get*' })], { ...query, resource: arn })).toBe(false)
    expect(verdict([allow({}), { Effect: 'Deny', Action: '*', Resource: '*' }], { ...query, resource: arn })).toBe(
      false,
    )
    // A Deny conditioned on any partition key: one matching key refuses the whole request; none leaves the Allow.
    const denyAny: PolicyStatement = { Effect: 'Deny', Action: 'dynamodb:PutItem', Resource: arn, Condition: any }
    const puts = [allow({ Action: 'dynamodb:PutItem' }), denyAny]
    const putOf = (...pks: string[]) => ({ ...batch(...pks), action: 'dynamodb:PutItem' })
    expect(verdict(puts, putOf('A#1'))).toBe(false)
    expect(verdict(puts, putOf('B#2', 'A#1'))).toBe(false)
    expect(verdict(puts, putOf('B#2'))).toBe(true)
    expect(() =>
      verdict([allow({ Condition: { StringLike: { 'dynamodb:LeadingKeys': 'A#*' } } })], batch('A#1')),
    ).toThrow(/not supported/)
  })
})
