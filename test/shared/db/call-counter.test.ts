import { createHash, randomUUID } from 'node:crypto'
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
    await countCalls(p, tokens, 1, 'seed-1')
    const { release } = await countCalls(p, tokens, 1, 'seed-1')
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(3)
  })

  it('counts the new tokens of a retried request whose other tokens are pending', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a', '+b'], 1, 'seed-2')

    // Act
    const { release } = await countCalls(p, ['+a', '+b', '+c'], 1, 'seed-2')
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(3)
  })

  it('clears the pending tokens on release, so the shard item stays small', async () => {
    // Prepare
    const p = project()
    const { release } = await countCalls(p, ['+x', '+y'], 1, 'seed-3')

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
    expect(items).toHaveLength(1)
    expect(items[0]?.pending).toBeUndefined()
    expect(items[0]?.n).toBe(2)
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
    const seed = createHash('sha256')
      .update(
        batch
          .map((b) => b.start.id)
          .sort()
          .join('\n'),
      )
      .digest('hex')
    await countCalls(
      p,
      batch.map((b) => `+${b.start.id}`),
      1,
      seed,
    )

    // Act
    await ingestCalls(principalFor(p), batch)
    await ingestCalls(principalFor(p), batch)

    // Assess
    expect(await readCallCount(p)).toBe(2)
  })

  it('releases only the tokens it counted, never those another request holds', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a'], 1, 'seed-5')

    // Act
    const { release } = await countCalls(p, ['+a', '+b'], 1, 'seed-5')
    await release()
    const again = await countCalls(p, ['+a'], 1, 'seed-5')

    // Assess
    expect(again.counted).toEqual([])
    expect(await readCallCount(p)).toBe(2)
  })

  it('reports the tokens it counted, leaving out those another request holds, and takes back on undo', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a'], 1, 'seed-4')

    // Act
    const count = await countCalls(p, ['+a', '+b', '+c'], 1, 'seed-4')
    await count.undo(['+c'])
    await count.release()

    // Assess
    expect(count.counted).toEqual(['+b', '+c'])
    expect(await readCallCount(p)).toBe(2)
  })

  it('subtracts deletions once', async () => {
    // Prepare
    const p = project()
    await countCalls(p, ['+a', '+b'], 1, 's')

    // Act
    await countCalls(p, ['-a'], -1, 'd')
    const { release } = await countCalls(p, ['-a'], -1, 'd')
    await release()

    // Assess
    expect(await readCallCount(p)).toBe(1)
  })
})
