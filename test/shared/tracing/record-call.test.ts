import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { readCallCount } from '#shared/db/call-counter'
import { readCall } from '#shared/tracing/call-ops'
import { uuidv7 } from '#shared/tracing/ids'
import { type RecordCallInput, recordCall, recordCalls } from '#shared/tracing/record-call'

describe('recordCall', () => {
  it('records one finished call with usage keyed by model and is idempotent on its id', async () => {
    // Prepare
    const project = `ent-${randomUUID().slice(0, 8)}/inference`
    const id = uuidv7()
    const input = {
      id,
      projectId: project,
      opName: 'chat.completions.create',
      inputs: { messages: [{ role: 'user', content: 'hi' }] },
      output: { choices: [{ message: { content: 'hello' } }] },
      summary: { usage: { 'llama-3': { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, requests: 1 } } },
      startedAt: new Date('2025-03-01T10:00:00.000Z'),
      endedAt: '2025-03-01T10:00:00.250Z',
      userId: 'user-42',
      attributes: { source: 'gateway' },
    }

    // Act
    const first = await recordCall(input)
    const again = await recordCall(input)
    const call = await readCall(project, id, {})

    // Assess
    expect(first).toEqual({ id, trace_id: id })
    expect(again).toEqual(first)
    expect(await readCallCount(project)).toBe(1)
    expect(call).toMatchObject({
      id,
      trace_id: id,
      parent_id: null,
      op_name: 'chat.completions.create',
      wb_user_id: 'user-42',
      attributes: { source: 'gateway' },
      output: { choices: [{ message: { content: 'hello' } }] },
      started_at: '2025-03-01T10:00:00Z',
      ended_at: '2025-03-01T10:00:00.250000Z',
      summary: {
        usage: { 'llama-3': { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, requests: 1 } },
        weave: { status: 'success', trace_name: 'chat.completions.create', latency_ms: 250 },
      },
    })
  })

  it('records an exception as an error call under a given parent and trace', async () => {
    // Prepare
    const project = `ent-${randomUUID().slice(0, 8)}/train`
    const id = uuidv7()

    // Act
    await recordCall({
      id,
      projectId: project,
      opName: 'train.step',
      inputs: {},
      output: null,
      startedAt: '2025-03-01T10:00:00Z',
      endedAt: '2025-03-01T10:00:01Z',
      userId: 'u',
      traceId: 'trace-1',
      parentId: 'parent-1',
      exception: 'out of memory',
    })
    const call = await readCall(project, id, {})

    // Assess
    expect(call).toMatchObject({ trace_id: 'trace-1', parent_id: 'parent-1', exception: 'out of memory' })
    expect(call?.summary).toMatchObject({ weave: { status: 'error' } })
  })
})

describe('recordCalls', () => {
  const call = (projectId: string, userId: string, fields: Partial<RecordCallInput> = {}): RecordCallInput => ({
    id: uuidv7(),
    projectId,
    opName: 'chat.completions.create',
    inputs: {},
    output: { n: 1 },
    startedAt: '2025-03-01T10:00:00Z',
    endedAt: '2025-03-01T10:00:01Z',
    userId,
    ...fields,
  })

  it('records the calls of several users and projects at once, each once, answering in order', async () => {
    // Prepare
    const [a, b] = [`ent-${randomUUID().slice(0, 8)}`, `ent-${randomUUID().slice(0, 8)}`]
    const inputs = [
      call(`${a}/one`, 'user-a'),
      call(`${b}/two`, 'user-b', { traceId: 'trace-b' }),
      call(`${a}/one`, 'user-a'),
      call(`${a}/three`, 'user-a'),
    ]

    // Act
    const recorded = await recordCalls(inputs)
    const again = await recordCalls(inputs)
    const stored = await Promise.all(inputs.map((input) => readCall(input.projectId, input.id, {})))

    // Assess
    expect(recorded).toEqual(inputs.map((input) => ({ id: input.id, trace_id: input.traceId ?? input.id })))
    expect(again).toEqual(recorded)
    expect(stored.map((c) => c?.wb_user_id)).toEqual(['user-a', 'user-b', 'user-a', 'user-a'])
    expect(await readCallCount(`${a}/one`)).toBe(2)
    expect(await readCallCount(`${b}/two`)).toBe(1)
    expect(await readCallCount(`${a}/three`)).toBe(1)
  })

  it('fails for a group it may not write, once the other groups are stored, and writes nothing of that group', async () => {
    // Prepare
    const own = `ent-${randomUUID().slice(0, 8)}`
    const ok = call(`${own}/ok`, 'user-c')
    const foreign = call(`ent-${randomUUID().slice(0, 8)}/theirs`, 'user-c', { entities: [own] })

    // Act
    const failure = await recordCalls([ok, foreign]).catch((e: unknown) => e)

    // Assess
    expect((failure as Error).name).toBe('ForbiddenError')
    expect(await readCall(ok.projectId, ok.id, {})).toMatchObject({ id: ok.id })
    expect(await readCall(foreign.projectId, foreign.id, {})).toBeNull()
  })
})
