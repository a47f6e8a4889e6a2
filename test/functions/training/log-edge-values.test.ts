import { describe, expect, it } from 'vitest'
import { app as metricsApp } from '#functions/training/get-model-metrics/handler'
import { app } from '#functions/training/log-trajectories/handler'
import { getIdempotencyRecord, listLogRecords } from '#shared/db/training-log-repository'
import type { MetricsHistory } from '#shared/schemas/training-log'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { newModel, trajectory } from '../../support/training.js'

// Inputs the contract allows (or plainly rejects) that reach the store's limits: numbers outside DynamoDB's range,
// splits too long for a sort key or not valid Unicode, over-long model ids, deep nesting. Each is answered as the
// contract says, never a 500, and a rejected call writes nothing.

type Detail = { type: string; loc: unknown[]; msg: string }

async function log(caller: TestCaller, modelId: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(`/v1/preview/models/${modelId}/log`, jsonInit(body, { ...caller.bearer, ...headers }))
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

async function history(caller: TestCaller, modelId: string, split: string): Promise<MetricsHistory> {
  const query = `?split=${encodeURIComponent(split)}`
  const res = await metricsApp.request(`/v1/preview/models/${modelId}/metrics${query}`, { headers: caller.bearer })
  expect(res.status).toBe(200)
  return (await res.json()) as MetricsHistory
}

describe('log calls at the limits of the store', () => {
  it('keeps metric values outside DynamoDB number range exactly, and replays them to a retry', async () => {
    const caller = await newCaller()
    const model = await newModel(caller)
    const body = {
      split: 'val',
      trajectory_groups: [
        {
          trajectories: [trajectory(1e200, { tiny: 1e-200 }), trajectory(1e200, { tiny: 1e-200 })],
          metrics: { huge: 1e130 },
        },
      ],
    }
    const headers = { 'Idempotency-Key': 'edge-values-1' }

    const first = await log(caller, model.id, body, headers)
    const retry = await log(caller, model.id, body, headers)

    expect(first.status).toBe(200)
    expect(first.json.metrics).toEqual({
      'val/reward': 1e200,
      'val/tiny': 1e-200,
      'val/group_metric_huge': 1e130,
      'val/exception_rate': 0,
      'val/reward_std_dev': 0,
    })
    expect(retry).toEqual(first)
    const rows = (await history(caller, model.id, 'val')).rows
    expect(rows.map((r) => r.metrics)).toEqual([first.json.metrics])
    expect((await getIdempotencyRecord(model.id, 'edge-values-1'))?.response?.metrics).toEqual(first.json.metrics)
  })

  it('stores and finds a split too long for a sort key as it is', async () => {
    const caller = await newCaller()
    const model = await newModel(caller)
    const long = 'é'.repeat(400)
    const other = `${'é'.repeat(399)}e`

    const first = await log(caller, model.id, { split: long, trajectory_groups: [{ trajectories: [trajectory(1)] }] })
    const second = await log(caller, model.id, { split: other, trajectory_groups: [{ trajectories: [trajectory(0)] }] })

    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    const rows = (await history(caller, model.id, long)).rows
    expect(rows.map((r) => [r.split, r.metrics[`${long}/reward`]])).toEqual([[long, 1]])
    expect((await history(caller, model.id, other)).rows.map((r) => r.split)).toEqual([other])
    expect((await listLogRecords(model.id)).length).toBe(2)
  })

  it('rejects a split that is not valid Unicode with a 422 and writes nothing', async () => {
    const caller = await newCaller()
    const model = await newModel(caller)
    const text = `{"split":"val\\ud800","trajectory_groups":[{"trajectories":[${JSON.stringify(trajectory(1))}]}]}`

    const res = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json', 'Idempotency-Key': 'surrogate-1' },
      body: text,
    })

    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: Detail[] }).detail).toEqual([
      {
        type: 'string_unicode',
        loc: ['body', 'split'],
        msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
      },
    ])
    expect(await listLogRecords(model.id)).toEqual([])
    expect(await getIdempotencyRecord(model.id, 'surrogate-1')).toBeUndefined()
  })

  it('rejects deep nesting under an unknown key with a 422 and writes nothing', async () => {
    const caller = await newCaller()
    const model = await newModel(caller)
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`
    const text = `{"split":"val","trajectory_groups":[{"trajectories":[],"extra":${deep}}]}`

    const res = await app.request(`/v1/preview/models/${model.id}/log`, {
      method: 'POST',
      headers: { ...caller.bearer, 'content-type': 'application/json', 'Idempotency-Key': 'deep-1' },
      body: text,
    })

    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: Detail[] }).detail[0]?.type).toBe('json_invalid')
    expect(await listLogRecords(model.id)).toEqual([])
    expect(await getIdempotencyRecord(model.id, 'deep-1')).toBeUndefined()
  })

  it('answers 404 for a model id too long to be a key', async () => {
    const caller = await newCaller()

    const res = await log(caller, 'm'.repeat(3_000), { split: 'val', trajectory_groups: [] })
    const metrics = await metricsApp.request(`/v1/preview/models/${'m'.repeat(3_000)}/metrics`, {
      headers: caller.bearer,
    })

    expect(res.status).toBe(404)
    expect(res.json).toEqual({ detail: `Model '${'m'.repeat(3_000)}' not found` })
    expect(metrics.status).toBe(404)
  })

  it('rejects a choice whose message content is not text', async () => {
    const caller = await newCaller()
    const model = await newModel(caller)
    const choice = {
      finish_reason: 'stop',
      index: 0,
      message: { role: 'assistant', content: [{ type: 'text', text: 'x' }] },
    }

    const res = await log(caller, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [{ messages_and_choices: [choice], reward: 1 }] }],
    })

    expect(res.status).toBe(422)
    expect(await listLogRecords(model.id)).toEqual([])
  })
})
