import { randomUUID } from 'node:crypto'
import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { countCalls, readCallCount } from '#shared/db/call-counter'
import { db, table } from '#shared/db/client'
import { ingestCalls } from '#shared/tracing/call-ingest'

const project = () => `ent-${randomUUID().slice(0, 8)}/p`
const principalFor = (p: string) => ({
  userId: 'u',
  keyId: 'k',
  entity: p.split('/')[0] as string,
  entities: [p.split('/')[0] as string],
})

function start(projectId: string, id: string) {
  return {
    mode: 'start' as const,
    start: { project_id: projectId, id, op_name: 'op', started_at: '2025-01-01T00:00:00Z', attributes: {}, inputs: {} },
  }
}

// Fails the first BatchWriteItem after the counter update, as a write failing between counting and storing would.
// (The document client's commands reach the middleware under the low-level client's names.)
async function withFailingBatchWrite<T>(act: () => Promise<T>): Promise<void> {
  let failed = false
  const name = `fail-batch-write-${randomUUID()}`
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (!failed && context.commandName === 'BatchWriteItemCommand') {
        failed = true
        throw Object.assign(new Error('injected crash'), { name: 'InternalServerError' })
      }
      return next(args)
    },
    { step: 'initialize', name },
  )
  try {
    await act()
  } catch {
    // The request failed, as the crash intends.
  } finally {
    db().middlewareStack.remove(name)
  }
}

describe('call counter', () => {
  it('adds once per token even when the same request counts again before releasing', async () => {
    // Prepare
    const p = project()
    const tokens = ['+a', '+b', '+c']

    // Act
    await countCalls(p, tokens, 1)
    const { release } = await countCalls(p, tokens, 1)
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(3)
  })

  it('counts the new tokens of a retried request whose other tokens are pending', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a', '+b'], 1)

    // Act
    const { release } = await countCalls(p, ['+a', '+b', '+c'], 1)
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(3)
  })

  it('clears the pending tokens on release, so the shard items stay small', async () => {
    // Prepare
    const p = project()
    const { release } = await countCalls(p, ['+x', '+y'], 1)

    // Act
    await release()

    // Assess
    const shards = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        db().send(
          new GetCommand({ TableName: table(), Key: { PK: `CALLCOUNT#${p}`, SK: `S#${String(i).padStart(2, '0')}` } }),
        ),
      ),
    )
    const items = shards.flatMap((s) => (s.Item ? [s.Item] : []))
    expect(items.length).toBeGreaterThanOrEqual(1)
    expect(items.every((item) => item.pending === undefined)).toBe(true)
    expect(items.reduce((sum, item) => sum + Number(item.n), 0)).toBe(2)
  })

  it('takes back the count of an ingest whose write failed after counting, and counts its retry once', async () => {
    // Prepare
    const p = project()
    const batch = [start(p, randomUUID()), start(p, randomUUID()), start(p, randomUUID())]

    // Act
    await withFailingBatchWrite(() => ingestCalls(principalFor(p), batch))
    const afterFailure = await readCallCount(p)
    await ingestCalls(principalFor(p), batch)
    await ingestCalls(principalFor(p), batch)

    // Assess
    expect(afterFailure).toBe(0)
    expect(await readCallCount(p)).toBe(3)
  })

  it('keeps a count a process left behind when it died between counting and writing: its retry counts nothing', async () => {
    // Prepare: the tokens and counts of an attempt that never wrote its calls nor released its tokens.
    const p = project()
    const batch = [start(p, randomUUID()), start(p, randomUUID())]
    await countCalls(
      p,
      batch.map((b) => `+${b.start.id}`),
      1,
    )

    // Act
    await ingestCalls(principalFor(p), batch)
    await ingestCalls(principalFor(p), batch)

    // Assess
    expect(await readCallCount(p)).toBe(2)
  })

  it('counts nothing again when the retry of a request that died after counting re-batches its calls', async () => {
    // Prepare: an attempt counted three calls and died before writing them or releasing its tokens. The client then
    // sends them again in other batches, mixed with new calls (the weave npm SDK puts a failed batch back at the head
    // of its queue), so no retry has the dead attempt's body.
    const p = project()
    const [d1, d2, d3] = [
      '0193a0c0-0000-7000-8000-000000000001',
      '0193a0c0-0000-7000-8000-000000000002',
      `${randomUUID()}`,
    ]
    await countCalls(p, [`+${d1}`, `+${d2}`, `+${d3}`], 1)
    const [n1, n2, n3, n4] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    const ingest = (ids: string[]) =>
      ingestCalls(
        principalFor(p),
        ids.map((id) => start(p, id)),
      )

    // Act
    await ingest([n1, d3, d1])
    await ingest([d2, n2, n3])
    await ingest([n4, d1, d2, d3])

    // Assess: every call counted once, the dead attempt's three included.
    expect(await readCallCount(p)).toBe(7)
  })

  it('releases only the tokens it counted, never those another request holds', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a'], 1)

    // Act
    const { release } = await countCalls(p, ['+a', '+b'], 1)
    await release()
    const again = await countCalls(p, ['+a'], 1)

    // Assess
    expect(again.counted).toEqual([])
    expect(await readCallCount(p)).toBe(2)
  })

  it('reports the tokens it counted, leaving out those another request holds, and takes back on undo', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a'], 1)

    // Act
    const count = await countCalls(p, ['+a', '+b', '+c'], 1)
    await count.undo(['+c'])
    await count.release()

    // Assess
    expect(count.counted).toEqual(['+b', '+c'])
    expect(await readCallCount(p)).toBe(2)
  })

  it('subtracts deletions once', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a', '+b'], 1)

    // Act
    await countCalls(p, ['-a'], -1)
    const { release } = await countCalls(p, ['-a'], -1)
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(1)
  })
})
