import { beforeAll, describe, expect, it } from 'vitest'
import { app } from '#functions/training/log-trajectories/handler'
import { listLogRecords } from '#shared/db/training-log-repository'
import { MAX_GROUPS_PER_LOG } from '#shared/training/log-input'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { type ModelView, newModel, trajectory } from '../../support/training.js'

type Detail = { loc: (string | number)[]; type: string; msg: string }

let caller: TestCaller
let model: ModelView

beforeAll(async () => {
  caller = await newCaller()
  model = await newModel(caller)
})

async function post(body: unknown): Promise<{ status: number; detail: Detail[] }> {
  const res = await app.request(`/v1/preview/models/${model.id}/log`, jsonInit(body, caller.bearer))
  const json = (await res.json()) as { detail: Detail[] }
  return { status: res.status, detail: json.detail }
}

const withTrajectory = (patch: Record<string, unknown>) => ({
  split: 'val',
  trajectory_groups: [{ trajectories: [trajectory(1), { ...trajectory(0), ...patch }] }],
})

const T1 = ['body', 'trajectory_groups', 0, 'trajectories', 1]
const VALID_NUMBER = 'Input should be a valid number'

describe('POST /v1/preview/models/{model_id}/log validation', () => {
  it.each([
    ['a missing reward', { reward: undefined }, [...T1, 'reward'], 'missing', 'Field required'],
    ['a reward sent as a string', { reward: '1.0' }, [...T1, 'reward'], 'float_type', 'Input should be a valid number'],
    [
      'missing messages_and_choices',
      { messages_and_choices: undefined },
      [...T1, 'messages_and_choices'],
      'missing',
      'Field required',
    ],
    [
      'a metric that is a string',
      { metrics: { duration: 'slow' } },
      [...T1, 'metrics', 'duration'],
      'float_type',
      'Input should be a valid number',
    ],
    [
      'a metric that is null',
      { metrics: { ok: null } },
      [...T1, 'metrics', 'ok'],
      'float_type',
      'Input should be a valid number',
    ],
    [
      'metrics that are not a map',
      { metrics: [1] },
      [...T1, 'metrics'],
      'dict_type',
      'Input should be a valid dictionary',
    ],
    [
      'a metadata value that is an object',
      { metadata: { a: { b: 1 } } },
      [...T1, 'metadata', 'a'],
      'float_type',
      'Input should be a valid number',
    ],
    [
      'a log line that is not a string',
      { logs: ['ok', 3] },
      [...T1, 'logs', 1],
      'string_type',
      'Input should be a valid string',
    ],
    [
      'a tool without a function name',
      { tools: [{ type: 'function', function: {} }] },
      [...T1, 'tools', 0, 'function', 'name'],
      'missing',
      'Field required',
    ],
    [
      'a tool of another type',
      { tools: [{ type: 'web', function: { name: 'f' } }] },
      [...T1, 'tools', 0, 'type'],
      'literal_error',
      "Input should be 'function'",
    ],
    [
      'a start_time that is not a date-time',
      { start_time: 'yesterday' },
      [...T1, 'start_time'],
      'datetime_from_date_parsing',
      'Input should be a valid datetime',
    ],
    [
      'a non-integer policy version',
      { initial_policy_version: 1.5 },
      [...T1, 'initial_policy_version'],
      'int_from_float',
      'Input should be a valid integer, got a number with a fractional part',
    ],
    [
      'a policy version that is not a numeral',
      { final_policy_version: 'x' },
      [...T1, 'final_policy_version'],
      'int_parsing',
      'Input should be a valid integer, unable to parse string as an integer',
    ],
    [
      'a policy version sent as a numeral string',
      { final_policy_version: '5' },
      [...T1, 'final_policy_version'],
      'int_type',
      'Input should be a valid integer',
    ],
    [
      'a policy version that is a boolean',
      { initial_policy_version: true },
      [...T1, 'initial_policy_version'],
      'int_type',
      'Input should be a valid integer',
    ],
  ])('locates %s', async (_name, patch, loc, type, msg) => {
    // Act
    const { status, detail } = await post(withTrajectory(patch))

    // Assess
    expect(status).toBe(422)
    expect(detail).toEqual([expect.objectContaining({ loc, type, msg })])
  })

  it('accepts every optional field with valid values', async () => {
    // Prepare
    const full = {
      ...trajectory(0.5, { duration: 1.5, solved: true }),
      tools: [
        {
          type: 'function',
          function: { name: 'search', description: 'web', parameters: { type: 'object' }, strict: true },
        },
      ],
      additional_histories: [{ messages_and_choices: [{ role: 'user', content: 'hi' }], tools: null }],
      initial_policy_version: 0,
      final_policy_version: 2,
      auto_metrics: { tokens: 12 },
      metadata: { id: 'a', n: 1, flag: false, none: null },
      logs: ['started'],
      start_time: '2025-06-01T12:00:00.123456Z',
    }

    // Act
    const { status } = await post({ split: 'val', trajectory_groups: [{ trajectories: [full] }] })

    // Assess
    expect(status).toBe(200)
  })

  it('tells a message from a Choice by its top-level role', async () => {
    // Prepare
    const items = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: 'result', tool_call_id: 'c1' },
      {
        finish_reason: 'stop',
        index: 0,
        logprobs: { content: [{ token: 'ok', logprob: -0.1, bytes: [111, 107], top_logprobs: [] }], refusal: null },
        message: { role: 'assistant', content: 'ok' },
      },
    ]

    // Act
    const ok = await post(withTrajectory({ messages_and_choices: items }))
    const badRole = await post(withTrajectory({ messages_and_choices: [...items, { role: 'wizard', content: 'x' }] }))
    const badChoice = await post(
      withTrajectory({
        messages_and_choices: [{ finish_reason: 'done', index: 0, message: { role: 'assistant', content: 'x' } }],
      }),
    )
    const badMessage = await post(withTrajectory({ messages_and_choices: [{ role: 'tool', content: 'x' }] }))

    // Assess
    expect(ok.status).toBe(200)
    expect(badRole.detail).toEqual([
      expect.objectContaining({
        loc: [...T1, 'messages_and_choices', 5, 'role'],
        type: 'literal_error',
        msg: "Input should be 'system', 'developer', 'user', 'assistant', 'tool' or 'function'",
      }),
    ])
    expect(badChoice.detail).toEqual([
      expect.objectContaining({ loc: [...T1, 'messages_and_choices', 0, 'finish_reason'], type: 'literal_error' }),
    ])
    expect(badMessage.detail).toEqual([
      expect.objectContaining({ loc: [...T1, 'messages_and_choices', 0, 'tool_call_id'], type: 'missing' }),
    ])
  })

  it('locates errors in group fields', async () => {
    // Act
    const { status, detail } = await post({
      split: 'val',
      trajectory_groups: [
        { trajectories: [] },
        {
          trajectories: [],
          metrics: { judge: 'high' },
          exceptions: [{ type: 'ValueError', message: 'x' }],
          logs: [null],
        },
      ],
    })

    // Assess
    expect(status).toBe(422)
    expect(detail.map((d) => [d.loc, d.type])).toEqual([
      [['body', 'trajectory_groups', 1, 'exceptions', 0, 'traceback'], 'missing'],
      [['body', 'trajectory_groups', 1, 'metrics', 'judge'], 'float_type'],
      [['body', 'trajectory_groups', 1, 'logs', 0], 'string_type'],
    ])
  })

  it('requires split, trajectory_groups and each group trajectories', async () => {
    // Act
    const top = await post({})
    const group = await post({ split: 'val', trajectory_groups: [{ metrics: {} }] })

    // Assess
    expect(top.status).toBe(422)
    expect(top.detail.map((d) => d.loc)).toEqual([
      ['body', 'split'],
      ['body', 'trajectory_groups'],
    ])
    expect(group.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'trajectory_groups', 0, 'trajectories'], type: 'missing' }),
    ])
  })

  it('validates values under a key named __proto__ like any other key', async () => {
    // Prepare: JSON text, since a JS literal's `__proto__` would set the prototype instead of a key.
    const t = (extra: string) => `{"messages_and_choices":[],"reward":1${extra}}`
    const body = `{"split":"val","trajectory_groups":[{"trajectories":[${t(',"metrics":{"__proto__":"abc"}')},${t(
      ',"metadata":{"x":1,"__proto__":[1]}',
    )}],"metrics":{"__proto__":null}}]}`

    // Act
    const res = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body,
    })

    // Assess
    const G0 = ['body', 'trajectory_groups', 0]
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: Detail[] }).detail).toEqual([
      { loc: [...G0, 'trajectories', 0, 'metrics', '__proto__'], type: 'float_type', msg: VALID_NUMBER, input: 'abc' },
      { loc: [...G0, 'trajectories', 1, 'metadata', '__proto__'], type: 'float_type', msg: VALID_NUMBER, input: [1] },
      { loc: [...G0, 'metrics', '__proto__'], type: 'float_type', msg: VALID_NUMBER, input: null },
    ])
  })

  it('refuses a body that is not UTF-8 with 400, as FastAPI does, and stores nothing', async () => {
    // Prepare: a split with two bytes that are no UTF-8 (a lenient decoder would store them as U+FFFD).
    const fresh = await newModel(caller)
    const body = Buffer.concat([
      Buffer.from('{"split":"val'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","trajectory_groups":[]}'),
    ])

    // Act
    const res = await app.request(`/v1/preview/models/${fresh.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body: new Uint8Array(body),
    })

    // Assess
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ detail: 'There was an error parsing the body' })
    expect(await listLogRecords(fresh.id)).toEqual([])
  })

  it('answers a JSON null body as a missing body, as FastAPI does', async () => {
    // Act
    const { status, detail } = await post(null)

    // Assess
    expect(status).toBe(422)
    expect(detail).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  })

  it('answers malformed JSON and a non-object body with 422', async () => {
    // Act
    const malformed = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body: '{"split": ',
    })
    const list = await post([1, 2])

    // Assess
    expect(malformed.status).toBe(422)
    expect(((await malformed.json()) as { detail: Detail[] }).detail[0]).toMatchObject({ type: 'json_invalid' })
    expect(list.detail).toEqual([expect.objectContaining({ loc: ['body'], type: 'dict_type' })])
  })

  it('refuses a body nested deeper than the limit with 422, before validation', async () => {
    // Prepare: the nesting check runs in the same pass that cuts the groups out of the body.
    const prefix = '{"split":"val","trajectory_groups":[{"trajectories":[],"metadata":{"x":'
    const body = `${prefix}${'['.repeat(300)}${']'.repeat(300)}}}]}`

    // Act
    const res = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json' },
      body,
    })

    // Assess: the 200th level is the 197th bracket after the prefix (the body, the list and the group's two objects).
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: Detail[] }).detail).toEqual([
      expect.objectContaining({ type: 'json_invalid', loc: ['body', prefix.length + 196] }),
    ])
  })

  it('refuses more groups than one call may store', async () => {
    // Act
    const groups = Array.from({ length: MAX_GROUPS_PER_LOG + 1 }, () => ({ trajectories: [] }))
    const { status, detail } = await post({ split: 'val', trajectory_groups: groups })

    // Assess
    expect(status).toBe(422)
    expect(detail).toEqual([expect.objectContaining({ loc: ['body', 'trajectory_groups'], type: 'too_long' })])
  })

  it('refuses a call whose distinct metric keys would not fit in its history row', async () => {
    // Prepare
    const metrics = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`metric_with_a_long_name_${i}`, i]))

    // Act
    const { status, detail } = await post({
      split: 'val',
      trajectory_groups: [{ trajectories: [trajectory(1, metrics)] }],
    })

    // Assess
    expect(status).toBe(422)
    expect(detail[0]?.msg).toContain('too many distinct metric keys')
    expect(detail[0]?.loc).toEqual(['body', 'trajectory_groups'])
  })

  it('names the split when its length, repeated in every metric key, is what makes the metrics too large', async () => {
    // Act: one trajectory's few metrics, each key prefixed with a 25 KB split
    const { status, detail } = await post({
      split: 's'.repeat(25_000),
      trajectory_groups: [{ trajectories: [trajectory(1)] }],
    })

    // Assess
    expect(status).toBe(422)
    expect(detail[0]?.loc).toEqual(['body', 'split'])
    expect(detail[0]?.msg).toMatch(/the split \(25000 bytes\) prefixes each of their \d+ keys/)
  })

  it('writes nothing when any part of the request is invalid', async () => {
    // Prepare
    const fresh = await newModel(caller)
    const body = {
      split: 'val',
      trajectory_groups: [{ trajectories: [trajectory(1)] }, { trajectories: [{ ...trajectory(0), reward: null }] }],
    }

    // Act
    const res = await app.request(`/v1/preview/models/${fresh.id}/log`, jsonInit(body, caller.bearer))

    // Assess
    expect(res.status).toBe(422)
    expect(await listLogRecords(fresh.id)).toEqual([])
  })
})
