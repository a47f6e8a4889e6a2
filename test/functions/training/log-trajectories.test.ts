import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as readCallApp } from '#functions/tracing/read-call/handler'
import { app as deleteApp } from '#functions/training/delete-preview-model/handler'
import { app } from '#functions/training/log-trajectories/handler'
import { config } from '#shared/config'
import { setPreviewModelStep } from '#shared/db/preview-model-repository'
import { claimIdempotencyKey, getLogGroups, listLogRecords, listLogRecordsAt } from '#shared/db/training-log-repository'
import { CHUNK_BYTES, decodeGroup } from '#shared/training/group-codec'
import { uuidv7 } from '#shared/training/log-trajectories'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { newModel, trajectory } from '../../support/training.js'

const logPath = (modelId: string) => `/v1/preview/models/${modelId}/log`

/** The fields the tests read from a log answer (a success or a 422). */
type LogJson = {
  log_id: string
  model_id: string
  step: number
  metrics: Record<string, number>
  detail: { loc: unknown[]; type: string; msg: string }[]
  [key: string]: unknown
}

async function log(caller: TestCaller, modelId: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(logPath(modelId), jsonInit(body, { ...caller.bearer, ...headers }))
  return { status: res.status, json: (await res.json()) as LogJson }
}

describe('POST /v1/preview/models/{model_id}/log', () => {
  describe('metrics', () => {
    it('computes every value of the contract worked example', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const body = {
        model_id: model.id,
        split: 'val',
        trajectory_groups: [
          {
            trajectories: [
              trajectory(1.0, { correct: true, duration: 2.0 }),
              trajectory(0.0, { correct: false, duration: 4.0 }),
            ],
            metrics: { judge_score: 0.8 },
            exceptions: [],
          },
          {
            trajectories: [trajectory(0.5, { correct: true })],
            metrics: { judge_score: 0.4 },
            exceptions: [{ type: "<class 'ValueError'>", message: 'boom', traceback: 'Traceback ...' }],
          },
        ],
      }

      // Act
      const { status, json } = await log(caller, model.id, body)

      // Assess
      expect(status).toBe(200)
      expect(json).toMatchObject({
        model_id: model.id,
        split: 'val',
        step: 0,
        group_count: 2,
        trajectory_count: 3,
        exception_count: 1,
      })
      expect(Object.keys(json.metrics).sort()).toEqual([
        'val/correct',
        'val/duration',
        'val/exception_rate',
        'val/group_metric_judge_score',
        'val/reward',
        'val/reward_std_dev',
      ])
      expect(json.metrics['val/reward']).toBeCloseTo(0.5, 12)
      expect(json.metrics['val/exception_rate']).toBeCloseTo(0.25, 12)
      expect(json.metrics['val/correct']).toBeCloseTo(2 / 3, 12)
      expect(json.metrics['val/duration']).toBeCloseTo(3.0, 12)
      expect(json.metrics['val/reward_std_dev']).toBeCloseTo(0.5, 12)
      expect(json.metrics['val/group_metric_judge_score']).toBeCloseTo(0.6, 12)
    })

    it('gives reward_std_dev 0 when every group has a single trajectory', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const groups = [0.2, 0.9, 0.4].map((r) => ({ trajectories: [trajectory(r)] }))

      // Act
      const { status, json } = await log(caller, model.id, { split: 'train', trajectory_groups: groups })

      // Assess
      expect(status).toBe(200)
      expect(json.metrics).toEqual({
        'train/reward': (0.2 + 0.9 + 0.4) / 3,
        'train/exception_rate': 0,
        'train/reward_std_dev': 0,
      })
    })

    it('averages population standard deviations over groups of more than one trajectory', async () => {
      // Prepare: std([1,2,3,4]) = sqrt(1.25); std([0,10]) = 5; the single-trajectory group is skipped.
      const caller = await newCaller()
      const model = await newModel(caller)
      const groups = [
        { trajectories: [1, 2, 3, 4].map((r) => trajectory(r)) },
        { trajectories: [0, 10].map((r) => trajectory(r)) },
        { trajectories: [trajectory(100)] },
      ]

      // Act
      const { json } = await log(caller, model.id, { split: 'train', trajectory_groups: groups })

      // Assess
      expect(json.metrics['train/reward_std_dev']).toBeCloseTo((Math.sqrt(1.25) + 5) / 2, 12)
      expect(json.metrics['train/reward']).toBeCloseTo((1 + 2 + 3 + 4 + 0 + 10 + 100) / 7, 12)
    })

    it('counts booleans as 1/0 and averages each metric over the trajectories that carry it', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const groups = [
        { trajectories: [trajectory(1, { solved: true, turns: 3 }), trajectory(0, { solved: false })] },
        { trajectories: [trajectory(0, { solved: false }), trajectory(1, { solved: true, turns: 5 })] },
        { trajectories: [trajectory(1, { solved: true, partial: 0.25 })] },
      ]

      // Act
      const { json } = await log(caller, model.id, { split: 'val', trajectory_groups: groups })

      // Assess
      expect(json.metrics['val/solved']).toBeCloseTo(3 / 5, 12)
      expect(json.metrics['val/turns']).toBe(4)
      expect(json.metrics['val/partial']).toBe(0.25)
    })

    it('counts exceptions as items of exception_rate and skips group metrics of groups without trajectories', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const exception = { type: "<class 'TimeoutError'>", message: 'rollout timed out', traceback: 'Traceback ...' }
      const groups = [
        { trajectories: [trajectory(1)], exceptions: [exception, exception], metrics: { judge: true } },
        { trajectories: [], exceptions: [exception], metrics: { judge: false } },
      ]

      // Act
      const { json } = await log(caller, model.id, { split: 'val', trajectory_groups: groups })

      // Assess
      expect(json).toMatchObject({ group_count: 2, trajectory_count: 1, exception_count: 3 })
      expect(json.metrics).toEqual({
        'val/reward': 1,
        'val/exception_rate': 3 / 4,
        'val/group_metric_judge': 1,
        'val/reward_std_dev': 0,
      })
    })

    it('answers only reward_std_dev for a request without trajectories', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)

      // Act
      const empty = await log(caller, model.id, { split: 'val', trajectory_groups: [] })
      const emptyGroup = await log(caller, model.id, {
        split: 'val',
        trajectory_groups: [{ trajectories: [], metrics: { x: 1 } }],
      })

      // Assess
      expect(empty.json.metrics).toEqual({ 'val/reward_std_dev': 0 })
      expect(emptyGroup.json.metrics).toEqual({ 'val/reward_std_dev': 0 })
    })

    it('shares one key namespace: a trajectory metric named reward is pooled, reward_std_dev is overwritten', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const groups = [{ trajectories: [trajectory(1, { reward: 0, reward_std_dev: 42 }), trajectory(0)] }]

      // Act
      const { json } = await log(caller, model.id, { split: 'val', trajectory_groups: groups })

      // Assess: reward pools [1, 0, 0] (the reward of t1, its metric, the reward of t2).
      expect(json.metrics['val/reward']).toBeCloseTo(1 / 3, 12)
      expect(json.metrics['val/reward_std_dev']).toBe(0.5)
    })

    it('treats a key named __proto__ like any other in metrics, metadata and the stored group', async () => {
      // Prepare: JSON text, since a JS literal's `__proto__` would set the prototype instead of a key.
      const caller = await newCaller()
      const model = await newModel(caller)
      const t = (reward: number, metrics: string) =>
        `{"messages_and_choices":[],"reward":${reward},"metrics":${metrics}}`
      const group = `{"trajectories":[${t(1, '{"__proto__":5,"x":1}')},${t(0, '{"__proto__":true}')}],"metrics":{"__proto__":0.5},"metadata":{"__proto__":"m"}}`

      // Act
      const res = await app.request(logPath(model.id), {
        method: 'POST',
        headers: { ...caller.bearer, 'content-type': 'application/json' },
        body: `{"split":"val","trajectory_groups":[${group}]}`,
      })

      // Assess
      expect(res.status).toBe(200)
      const json = (await res.json()) as LogJson
      expect(json.metrics).toEqual({
        'val/reward': 0.5,
        'val/exception_rate': 0,
        'val/__proto__': 3,
        'val/x': 1,
        'val/reward_std_dev': 0.5,
        'val/group_metric___proto__': 0.5,
      })
      const [record] = await listLogRecords(model.id, 'val')
      expect(record?.metrics).toEqual(json.metrics)
      expect((await getLogGroups(record as never)).map(decodeGroup)).toEqual([group])
    })

    it('uses the split verbatim in metric keys and the model step as the step', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      await setPreviewModelStep(model.id, 7)

      // Act
      const { json } = await log(caller, model.id, {
        split: 'eval#hard/v2',
        trajectory_groups: [{ trajectories: [trajectory(0.75)] }],
      })

      // Assess
      expect(json.step).toBe(7)
      expect(json.metrics['eval#hard/v2/reward']).toBe(0.75)
    })

    it('takes the model from the path and ignores model_id in the body', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)

      // Act
      const { status, json } = await log(caller, model.id, {
        model_id: 'some-other-model',
        split: 'val',
        trajectory_groups: [{ trajectories: [trajectory(1)] }],
      })

      // Assess
      expect(status).toBe(200)
      expect(json.model_id).toBe(model.id)
    })
  })

  describe('persistence', () => {
    it('stores each group whole under (model, split, step), unknown keys included', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const groups = [
        { trajectories: [{ ...trajectory(1), extra_field: { kept: [1, 2] } }], metadata: { prompt_id: 'p1' } },
        { trajectories: [trajectory(0), trajectory(0.5)], logs: ['rollout ok'], custom: 'x' },
      ]

      // Act
      const { json } = await log(caller, model.id, { split: 'train', trajectory_groups: groups })

      // Assess
      const records = await listLogRecords(model.id, 'train')
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ logId: json.log_id, split: 'train', step: 0, groupCount: 2 })
      const stored = (await getLogGroups(records[0] as never)).map(decodeGroup)
      expect(stored).toEqual(groups.map((g) => JSON.stringify(g)))
    })

    it('stores each group as the exact text sent: big integers, 1.0, escapes, spacing and duplicate keys kept (QA)', async () => {
      // Prepare: what ART's client (pydantic, json.dumps) may send; JSON.parse would round the integers beyond 2^53.
      const caller = await newCaller()
      const model = await newModel(caller)
      const first =
        '{"trajectories":[{"messages_and_choices":[{"role":"user","content":"q"},' +
        '{"finish_reason":"stop","index":0,"logprobs":null,"message":{"role":"assistant","content":"a"},"token_ids":[151644,151645]}],' +
        '"reward":1.0,"metrics":{"score":0.10},"metadata":{"snowflake_id":1234567890123456789,"seed":18446744073709551615,"s":"\\u00e9 \\"]\\","}}],' +
        '"exceptions":[],"metadata":{"n":1E+300,"dup":1,"dup":2},"metrics":{},"logs":[],"unknown":{"kept":[1.50]}}'
      const second = '{\n  "trajectories": [\n    {"messages_and_choices": [], "reward": -0.0}\n  ]\n}'
      const body = `{"model_id": "${model.id}", "trajectory_groups": [ ${first},\n\t${second} ], "split": "val"}`

      // Act
      const res = await app.request(logPath(model.id), {
        method: 'POST',
        headers: { ...caller.bearer, 'content-type': 'application/json' },
        body,
      })

      // Assess
      expect(res.status).toBe(200)
      const [record] = await listLogRecords(model.id, 'val')
      expect((await getLogGroups(record as never)).map(decodeGroup)).toEqual([first, second])
    })

    it('finds a call by (model, split, step) and not under another split or step', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      await setPreviewModelStep(model.id, 3)
      const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1)] }] }

      // Act
      const { json } = await log(caller, model.id, body)

      // Assess
      expect((await listLogRecordsAt(model.id, 'train', 3)).map((r) => r.logId)).toEqual([json.log_id])
      expect(await listLogRecordsAt(model.id, 'train', 2)).toEqual([])
      expect(await listLogRecordsAt(model.id, 'val', 3)).toEqual([])
      expect(await listLogRecordsAt(model.id, 'trai', 3)).toEqual([])
    })

    it('splits a group larger than the 400 KB item limit into chunks and reassembles it byte for byte', async () => {
      // Prepare: random text does not compress, so the stored group stays above one chunk.
      const caller = await newCaller()
      const model = await newModel(caller)
      const big = trajectory(1)
      ;(big.messages_and_choices as unknown[]).push({ role: 'user', content: randomBytes(700_000).toString('base64') })
      const group = { trajectories: [big, trajectory(0)], metadata: { note: 'ünïcödé ✓' } }

      // Act
      const { status, json } = await log(caller, model.id, { split: 'train', trajectory_groups: [group] })

      // Assess
      expect(status).toBe(200)
      const [record] = await listLogRecords(model.id, 'train')
      expect(record?.logId).toBe(json.log_id)
      expect(record?.chunks[0]).toBeGreaterThan(1)
      const chunks = (await getLogGroups(record as never))[0] as Uint8Array[]
      expect(chunks.every((c) => c.length <= CHUNK_BYTES)).toBe(true)
      expect(Buffer.from(decodeGroup(chunks), 'utf8').equals(Buffer.from(JSON.stringify(group), 'utf8'))).toBe(true)
    })

    it('accepts a body just under the size limit and refuses one just over with 413', async () => {
      // Prepare: pad one message so the JSON body is exactly maxBodyBytes, then one byte more.
      const caller = await newCaller()
      const model = await newModel(caller)
      const bodyOfSize = (size: number) => {
        const message = { role: 'user', content: '' }
        const padded = { ...trajectory(1), messages_and_choices: [message] }
        const body = { split: 'train', trajectory_groups: [{ trajectories: [padded] }] }
        message.content = 'x'.repeat(size - Buffer.byteLength(JSON.stringify(body)))
        return JSON.stringify(body)
      }
      const init = (text: string) => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...caller.bearer },
        body: text,
      })

      // Act
      const under = await app.request(logPath(model.id), init(bodyOfSize(config.maxBodyBytes)))
      const over = await app.request(logPath(model.id), init(bodyOfSize(config.maxBodyBytes + 1)))

      // Assess
      expect(under.status).toBe(200)
      expect(over.status).toBe(413)
      expect(await over.json()).toEqual({ detail: `Request body larger than ${config.maxBodyBytes} bytes` })
      expect(await listLogRecords(model.id)).toHaveLength(1)
    })
  })

  describe('idempotency', () => {
    it('replays the first response for a retry with the same key and body, writing nothing twice', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }
      const key = { 'idempotency-key': 'retry-1' }

      // Act
      const first = await log(caller, model.id, body, key)
      const second = await log(caller, model.id, body, key)

      // Assess
      expect(first.status).toBe(200)
      expect(second.status).toBe(200)
      expect(second.json).toEqual(first.json)
      expect(await listLogRecords(model.id)).toHaveLength(1)
    })

    it('finishes a call whose earlier attempt stopped after claiming the key, reusing its ids', async () => {
      // Prepare: the claim exists without a response, as after a crash mid-write.
      const caller = await newCaller()
      const model = await newModel(caller)
      const body = { split: 'train', trajectory_groups: [{ trajectories: [trajectory(0.5)] }] }
      const bodyHash = createHash('sha256').update(JSON.stringify(body)).digest('hex')
      const claim = { bodyHash, logId: uuidv7(), step: 4, recordedAt: '2025-05-05T05:05:05.000Z' }
      await claimIdempotencyKey(model.id, 'crashed', claim)

      // Act
      const retry = await log(caller, model.id, body, { 'idempotency-key': 'crashed' })
      const replay = await log(caller, model.id, body, { 'idempotency-key': 'crashed' })

      // Assess
      expect(retry.status).toBe(200)
      expect(retry.json).toMatchObject({ log_id: claim.logId, step: 4, recorded_at: claim.recordedAt })
      expect(replay.json).toEqual(retry.json)
      expect(await listLogRecords(model.id)).toHaveLength(1)
    })

    it('refuses the same key with a different body with 422 and keeps the first call', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const key = { 'idempotency-key': 'retry-2' }
      await log(caller, model.id, { split: 'train', trajectory_groups: [{ trajectories: [trajectory(1)] }] }, key)

      // Act
      const { status, json } = await log(
        caller,
        model.id,
        { split: 'train', trajectory_groups: [{ trajectories: [trajectory(0)] }] },
        key,
      )

      // Assess
      expect(status).toBe(422)
      expect(json.detail[0]).toMatchObject({ loc: ['header', 'Idempotency-Key'], type: 'idempotency_key_reused' })
      const records = await listLogRecords(model.id)
      expect(records.map((r) => r.metrics['train/reward'])).toEqual([1])
    })

    it('logs twice without a key or with different keys', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const body = { split: 'val', trajectory_groups: [{ trajectories: [trajectory(1)] }] }

      // Act
      const a = await log(caller, model.id, body)
      const b = await log(caller, model.id, body)
      const c = await log(caller, model.id, body, { 'idempotency-key': 'k-a' })
      const d = await log(caller, model.id, body, { 'idempotency-key': 'k-b' })

      // Assess
      expect(new Set([a, b, c, d].map((r) => r.json.log_id)).size).toBe(4)
      expect(await listLogRecords(model.id, 'val')).toHaveLength(4)
    })

    it('scopes keys to the model', async () => {
      // Prepare
      const caller = await newCaller()
      const [m1, m2] = [await newModel(caller), await newModel(caller)]
      const key = { 'idempotency-key': 'shared-key' }

      // Act
      const a = await log(caller, m1.id, { split: 'val', trajectory_groups: [{ trajectories: [trajectory(1)] }] }, key)
      const b = await log(caller, m2.id, { split: 'val', trajectory_groups: [{ trajectories: [trajectory(0)] }] }, key)

      // Assess
      expect(a.status).toBe(200)
      expect(b.status).toBe(200)
      expect(b.json.model_id).toBe(m2.id)
    })

    it('rejects an Idempotency-Key that is too long', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)

      // Act
      const { status, json } = await log(
        caller,
        model.id,
        { split: 'val', trajectory_groups: [] },
        { 'idempotency-key': 'k'.repeat(256) },
      )

      // Assess
      expect(status).toBe(422)
      expect(json.detail[0]?.loc).toEqual(['header', 'Idempotency-Key'])
    })
  })

  describe('traces', () => {
    it("records each log call once as a loom.training.log call in the model's project", async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      const body = { split: 'val', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }
      const key = { 'idempotency-key': 'trace-1' }

      // Act: a retry with the same key is a replay and must not trace twice.
      const first = await log(caller, model.id, body, key)
      await log(caller, model.id, body, key)
      const projectId = `${caller.entity}/${model.project}`
      const read = await readCallApp.request(
        '/call/read',
        jsonInit({ project_id: projectId, id: first.json.log_id }, caller.basic),
      )
      const stats = await statsApp.request('/calls/query_stats', jsonInit({ project_id: projectId }, caller.basic))

      // Assess
      const call = ((await read.json()) as { call: Record<string, unknown> }).call
      expect(call).toMatchObject({
        id: first.json.log_id,
        trace_id: first.json.log_id,
        op_name: 'loom.training.log',
        wb_user_id: caller.userId,
        output: first.json,
        summary: expect.objectContaining({
          training: { split: 'val', step: 0, metrics: first.json.metrics },
          weave: expect.objectContaining({ status: 'success' }),
        }),
      })
      expect(first.json.metrics).toMatchObject({ 'val/reward': 0.5, 'val/reward_std_dev': 0.5 })
      expect(await stats.json()).toMatchObject({ count: 1 })
    })
  })

  describe('models and auth', () => {
    it('answers 404 for an unknown model', async () => {
      // Prepare
      const caller = await newCaller()

      // Act
      const { status, json } = await log(caller, 'no-such-model', { split: 'val', trajectory_groups: [] })

      // Assess
      expect(status).toBe(404)
      expect(json).toEqual({ detail: "Model 'no-such-model' not found" })
    })

    it("answers 404 for another entity's model and writes nothing", async () => {
      // Prepare
      const owner = await newCaller()
      const stranger = await newCaller()
      const model = await newModel(owner)

      // Act
      const { status, json } = await log(stranger, model.id, {
        split: 'val',
        trajectory_groups: [{ trajectories: [trajectory(1)] }],
      })

      // Assess
      expect(status).toBe(404)
      expect(json).toEqual({ detail: `Model '${model.id}' not found` })
      expect(await listLogRecords(model.id)).toHaveLength(0)
    })

    it('answers 404 for a deleted model', async () => {
      // Prepare
      const caller = await newCaller()
      const model = await newModel(caller)
      await deleteApp.request(`/v1/preview/models/${model.id}`, { method: 'DELETE', headers: caller.bearer })

      // Act
      const { status } = await log(caller, model.id, { split: 'val', trajectory_groups: [] })

      // Assess
      expect(status).toBe(404)
    })

    it('answers 401 without a key', async () => {
      // Act
      const res = await app.request(logPath('m'), jsonInit({ split: 'val', trajectory_groups: [] }, {}))

      // Assess
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ detail: 'Authentication failed' })
    })
  })
})
