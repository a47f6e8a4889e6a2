import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as deleteApp } from '#functions/tracing/delete-calls/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as upsertBatch } from '#functions/tracing/upsert-call-batch/handler'
import { jsonInit } from '../support/auth.js'
import { endPart, startPart } from '../support/calls.js'
import { newProjectCaller } from '../support/tracing.js'

// Found by `npm run bench:load`: a client retry racing its original made `calls/query_stats` count calls twice.
const ROUNDS = 12
const COPIES = 4

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function countOf(caller: { project: string; basic: Record<string, string> }): Promise<number> {
  const res = await statsApp.request('/calls/query_stats', jsonInit({ project_id: caller.project }, caller.basic))
  if (res.status !== 200) throw new Error(`query_stats ${res.status}`)
  return ((await res.json()) as { count: number }).count
}

describe('the unfiltered calls/query_stats count under retries racing their original', () => {
  it.each([
    ['copies of one upsert_batch arrive', ROUNDS, false],
    ['different batches carrying the same calls arrive (a client that re-batches)', ROUNDS / 2, true],
  ])('counts each call once when %s staggered by a few milliseconds', async (_what, rounds, rebatched) => {
    // Prepare
    const caller = await newProjectCaller()
    let distinct = 0
    const parts = (id: string) => [
      { mode: 'start', req: { start: startPart(caller.project, { id }) } },
      { mode: 'end', req: { end: endPart(caller.project, id) } },
    ]

    // Act
    for (let round = 0; round < rounds; round++) {
      const ids = Array.from({ length: 5 }, () => randomUUID())
      distinct += ids.length
      const sends = Array.from({ length: COPIES }, async (_, n) => {
        // A re-batched copy carries a call of its own, first, so no two bodies are alike.
        const own = rebatched ? [randomUUID()] : []
        distinct += own.length
        const batch = [...own, ...ids].flatMap(parts)
        await sleep(n * (round % 6))
        const res = await upsertBatch.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))
        return res.status
      })
      expect(await Promise.all(sends)).toEqual(Array(COPIES).fill(200))
    }
    const count = await countOf(caller)

    // Assess
    expect(count).toBe(distinct)
  })

  it('uncounts each call once when copies of one calls/delete arrive staggered by a few milliseconds', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ids = Array.from({ length: ROUNDS * 2 }, () => randomUUID())
    const batch = ids.map((id) => ({ mode: 'start', req: { start: startPart(caller.project, { id }) } }))
    await upsertBatch.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))

    // Act
    for (let round = 0; round < ROUNDS; round++) {
      const doomed = ids.slice(round * 2, round * 2 + 1)
      const sends = Array.from({ length: COPIES }, async (_, n) => {
        await sleep(n * (round % 6))
        const body = { project_id: caller.project, call_ids: doomed }
        return (await deleteApp.request('/calls/delete', jsonInit(body, caller.basic))).status
      })
      expect(await Promise.all(sends)).toEqual(Array(COPIES).fill(200))
    }
    const count = await countOf(caller)

    // Assess
    expect(count).toBe(ids.length - ROUNDS)
  })
})
