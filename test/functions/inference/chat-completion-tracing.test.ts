import '../../support/lambda-shim.js'
import { describe, expect, it, vi } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache } from '#shared/inference/catalog'
import { traceCompletion } from '#shared/inference/trace-completion'
import { logger } from '#shared/logger'
import type { CatalogModel } from '#shared/schemas/model'
import { jsonInit } from '../../support/auth.js'
import { holdDynamoCommands } from '../../support/hold-dynamo.js'
import { upstreamModelFixture } from '../../support/models.js'

const { caller, model } = await upstreamModelFixture()

type Call = {
  op_name: string
  inputs: Record<string, unknown>
  output: Record<string, unknown>
  summary: Record<string, unknown>
  exception: string | null
}

async function calls(projectId: string): Promise<Call[]> {
  const res = await queryApp.request('/calls/stream_query', jsonInit({ project_id: projectId }, caller.basic))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Call)
}

/** The project's unfiltered `calls/query_stats` count: each stored call counted once. */
async function count(projectId: string): Promise<number> {
  const res = await statsApp.request('/calls/query_stats', jsonInit({ project_id: projectId }, caller.basic))
  return ((await res.json()) as { count: number }).count
}

// The trace is written after the response (shared/http/after-response.ts): once that work has settled it is stored,
// or it never will be. No polling: a slow host waits longer instead of failing.
async function tracedCalls(projectId: string): Promise<Call[]> {
  await settleAfterResponse()
  return calls(projectId)
}

const messages = [{ role: 'user', content: 'trace me please' }]

describe('tracing of gateway completions', () => {
  it('records a non-streamed completion as a call with the request, the response and usage by model', async () => {
    // Prepare
    const projectId = `${caller.entity}/traced-${Date.now()}`

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages }, { ...caller.bearer, 'OpenAI-Project': projectId }),
    )
    const body = (await res.json()) as { id: string }
    const [call, ...more] = await tracedCalls(projectId)

    // Assess
    expect(more).toEqual([])
    expect(call?.op_name).toBe('loom.chat.completions')
    expect(call?.inputs).toMatchObject({ model, messages })
    expect(call?.output).toMatchObject({ id: body.id, choices: [{ message: { content: 'trace me please' } }] })
    expect(call?.summary).toMatchObject({
      usage: { [model]: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, requests: 1 } },
    })
  })

  it('records a streamed completion with its assembled output', async () => {
    const projectId = `${caller.entity}/traced-stream-${Date.now()}`
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages, stream: true }, { ...caller.bearer, 'OpenAI-Project': projectId }),
    )
    await res.text()
    const [call] = await tracedCalls(projectId)
    expect(call?.output).toMatchObject({
      choices: [{ index: 0, message: { role: 'assistant', content: 'trace me please' }, finish_reason: 'stop' }],
    })
    expect(call?.summary).toMatchObject({ usage: { [model]: { prompt_tokens: 5, completion_tokens: 3 } } })
  })

  it("keeps the usage's completion_tokens_details (reasoning tokens) in the summary, streamed or not", async () => {
    // Prepare: the reference engine reports reasoning tokens as hosted APIs do.
    const reasoner = referenceCatalogModel({ id: `loom/reasoner-${Date.now()}` })
    await putModel(reasoner)
    clearCatalogCache()
    const projectId = `${caller.entity}/traced-reasoning-${Date.now()}`
    const request = {
      model: reasoner.id,
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      reasoning_effort: 'low',
      seed: 2,
      max_completion_tokens: 60,
    }
    type Usage = { completion_tokens_details?: { reasoning_tokens: number } }

    // Act
    const headers = { ...caller.bearer, 'OpenAI-Project': projectId }
    const plain = (await (await app.request('/v1/chat/completions', jsonInit(request, headers))).json()) as {
      usage: Usage
    }
    const sse = await (
      await app.request(
        '/v1/chat/completions',
        jsonInit({ ...request, stream: true, stream_options: { include_usage: true } }, headers),
      )
    ).text()
    const streamed = sse
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)) as { usage?: Usage | null })
      .find((chunk) => chunk.usage != null)?.usage
    const traced = await tracedCalls(projectId)

    // Assess
    const details = plain.usage.completion_tokens_details
    expect(details?.reasoning_tokens).toBeGreaterThan(0)
    expect(streamed?.completion_tokens_details).toEqual(details)
    const recorded = traced.map((call) => (call.summary.usage as Record<string, Usage>)[reasoner.id])
    expect(recorded).toHaveLength(2)
    for (const usage of recorded) expect(usage?.completion_tokens_details).toEqual(details)
  })

  it('records nothing with Loom-Trace: off', async () => {
    // Prepare
    const projectId = `${caller.entity}/untraced-${Date.now()}`

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages }, { ...caller.bearer, 'OpenAI-Project': projectId, 'Loom-Trace': 'off' }),
    )
    await res.json()

    // Assess
    expect(res.status).toBe(200)
    expect(await tracedCalls(projectId)).toEqual([])
  })

  it('traces the completions that end while trace writes are in flight together, each once', async () => {
    // Prepare: the first trace writes are held until every completion has answered, so the others queue behind them.
    const projectId = `${caller.entity}/traced-burst-${Date.now()}`
    // The writes of completion traces (nothing else on the chat path batch-writes) wait while the test decides.
    const batchWrites = holdDynamoCommands(({ name }) => name === 'BatchWriteItemCommand')

    // Act
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        app.request(
          '/v1/chat/completions',
          jsonInit(
            { model, messages: [{ role: 'user', content: `burst ${i}` }] },
            { ...caller.bearer, 'OpenAI-Project': projectId },
          ),
        ),
      ),
    )
    const ids = await Promise.all(answers.map(async (res) => ((await res.json()) as { id: string }).id))
    batchWrites.release()
    const traced = await tracedCalls(projectId)
    const writes = batchWrites.count()
    batchWrites.stop()

    // Assess
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 200))
    expect(traced.map((call) => call.output.id).sort()).toEqual([...ids].sort())
    expect(await count(projectId)).toBe(30)
    // 60 parts: written one completion at a time they take 30 requests. Two writes in flight hold some traces each;
    // the rest go in one batch, BatchWriteItem's 25 items per request: at most 1 + 1 + 3.
    expect(writes).toBeLessThanOrEqual(5)
  })

  it('keeps the traces of a batch when the store refuses one of them, which is logged', async () => {
    // Prepare
    const projectId = `${caller.entity}/traced-refused-${Date.now()}`
    const foreign = `ent-foreign-${Date.now()}/p`
    const warn = vi.spyOn(logger, 'warn')
    const principal = { userId: caller.userId, keyId: caller.keyId, entity: caller.entity, entities: [caller.entity] }
    const trace = (project: string, content: string) => ({
      principal,
      projectId: project,
      model: { id: model } as CatalogModel,
      request: { model, messages: [{ role: 'user' as const, content }] },
      output: { content },
      usage: { prompt_tokens: 1, completion_tokens: 1 },
      startedAt: new Date(),
      endedAt: new Date(),
    })

    // Act: traced in one turn, so they share a write; the caller has no access to the foreign project.
    await Promise.all([
      traceCompletion(trace(projectId, 'first')),
      traceCompletion(trace(foreign, 'refused')),
      traceCompletion(trace(projectId, 'second')),
    ])
    const traced = await calls(projectId)

    // Assess
    expect(traced.map((call) => call.output.content).sort()).toEqual(['first', 'second'])
    // Written together, then again one by one after the refusal: counted once each all the same.
    expect(await count(projectId)).toBe(2)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn).toHaveBeenCalledWith('tracing a completion failed', expect.anything())
  })
})
