import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as usageApp } from '#functions/inference/get-usage/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { app as traceUsageApp } from '#functions/tracing/trace-usage/handler'
import { putModel } from '#shared/db/model-repository'
import { listUsage } from '#shared/db/usage-repository'
import { engineFor } from '#shared/engine/engine'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache, resolveModel } from '#shared/inference/catalog'
import { flushUsage, hourOf } from '#shared/inference/usage-meter'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'
import { sseChunks, sseEvents } from '../../support/sse.js'
import { until } from '../../support/until.js'

// What the meter (`/v1/usage`, its counters) and the trace (`summary.usage`, `trace/usage`) say of one completion must
// agree, however it ended (docs/inference.md §4.5, §12; docs/architecture.md, Metering).

const { upstream, caller, model: upstreamModel } = await upstreamModelFixture()

// A reference model of its own: one slot, so a request can be held in its queue; a prefix cache reporting details.
const reference = referenceCatalogModel({
  id: `loom/metering-${randomUUID().slice(0, 8)}`,
  backend: { kind: 'reference', settings: { maxConcurrency: 1, promptTokensDetails: true } },
})
await putModel(reference)
clearCatalogCache()

beforeEach(() => upstream.behave({}))

const messages = [{ role: 'user', content: 'one two three four five six seven eight' }]
// About 1,800 characters: the estimate (4 characters a token) is far from the engine's byte-level count.
const long = [{ role: 'user', content: `Remember this: ${'the weaver and the river. '.repeat(70)}` }]

type Usage = { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } }
type Call = { summary: { usage?: Record<string, Record<string, number>> }; exception: string | null }

const projectOf = (name: string) => `${caller.entity}/${name}-${Date.now()}-${randomUUID().slice(0, 4)}`

function chat(project: string, body: Record<string, unknown>, signal?: AbortSignal) {
  const init = jsonInit({ model: upstreamModel, messages, ...body }, { ...caller.bearer, 'OpenAI-Project': project })
  return app.request('/v1/chat/completions', signal === undefined ? init : { ...init, signal })
}

async function counters(project: string) {
  await flushUsage()
  const name = project.split('/')[1] as string
  const found = await listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), name)
  const sum = (f: (c: (typeof found)[number]) => number) => found.reduce((n, c) => n + f(c), 0)
  return {
    requests: sum((c) => c.requests),
    aborted: sum((c) => c.abortedRequests),
    prompt: sum((c) => c.promptTokens),
    completion: sum((c) => c.completionTokens),
    cached: sum((c) => c.cachedTokens),
  }
}

async function tracedCalls(project: string): Promise<Call[]> {
  await settleAfterResponse()
  const res = await queryApp.request('/calls/stream_query', jsonInit({ project_id: project }, caller.basic))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Call)
}

describe('a stream that fails after output', () => {
  for (const [name, behaviour] of [
    ['the upstream disconnects', { dropAfterChunks: 3, chunkDelayMs: 5 }],
    ['the upstream sends an error event', { errorAfterChunks: 3, chunkDelayMs: 5 }],
  ] as const) {
    it(`is metered and traced as one aborted request with the tokens delivered when ${name}`, async () => {
      // Prepare
      const project = projectOf('failed-after-output')
      upstream.behave(behaviour)

      // Act
      const events = sseEvents(await (await chat(project, { stream: true })).text())
      const metered = await counters(project)
      const calls = await tracedCalls(project)

      // Assess
      expect(JSON.parse(events.at(-2) ?? '{}')).toHaveProperty('error')
      const delivered = sseChunks(events.join('\n\n')).filter((c) => {
        const choices = c.choices as { delta?: { content?: string } }[] | undefined
        return choices?.[0]?.delta?.content
      })
      expect(delivered).toHaveLength(3)
      expect(metered).toMatchObject({ requests: 1, aborted: 1, completion: 3 })
      expect(metered.prompt).toBeGreaterThan(0)
      expect(calls).toHaveLength(1)
      expect(calls[0]?.exception).toEqual(expect.any(String))
      expect(calls[0]?.summary.usage?.[upstreamModel]).toMatchObject({
        requests: 1,
        prompt_tokens: metered.prompt,
        completion_tokens: 3,
      })
    })
  }
})

describe('trace/usage and /v1/usage', () => {
  it('count the same requests: a failed completion is traced with its exception and no usage', async () => {
    // Prepare
    const project = projectOf('agree')

    // Act: one served, two the engine refuses after the request reached it, one the gateway refuses
    const statuses: number[] = []
    for (const body of [
      { max_tokens: 4 },
      // The whole window (8192) for output leaves no room for the prompt: vLLM's `_token_len_check`.
      { max_tokens: 8192 },
      { max_tokens: 4, logit_bias: { '100000': 5 } },
      { max_tokens: 4, temperature: 9 },
    ]) {
      const res = await chat(project, { model: reference.id, ...body })
      await res.text()
      statuses.push(res.status)
    }
    await flushUsage()
    const calls = await tracedCalls(project)
    const report = (await (
      await usageApp.request(`/v1/usage?project=${project}`, { headers: caller.bearer })
    ).json()) as {
      total: { requests: number; prompt_tokens: number; completion_tokens: number }
    }
    const traced = await traceUsageApp.request('/trace/usage', jsonInit({ project_id: project }, caller.basic))
    const { call_usage } = (await traced.json()) as {
      call_usage: Record<string, Record<string, Record<string, number>>>
    }
    const usages = Object.values(call_usage).flatMap((byModel) => Object.values(byModel))
    const sum = (key: string) => usages.reduce((n, u) => n + (u[key] ?? 0), 0)

    // Assess
    expect(statuses).toEqual([200, 400, 400, 400])
    expect(calls).toHaveLength(3)
    expect(calls.filter((call) => call.exception !== null)).toHaveLength(2)
    for (const call of calls.filter((c) => c.exception !== null)) expect(call.summary.usage).toBeUndefined()
    expect(report.total.requests).toBe(1)
    expect(sum('requests')).toBe(report.total.requests)
    expect(sum('prompt_tokens')).toBe(report.total.prompt_tokens)
    expect(sum('completion_tokens')).toBe(report.total.completion_tokens)
  })
})

describe('an aborted completion on the reference engine', () => {
  it('meters the exact prompt of a JSON request the client leaves while it waits for a slot', async () => {
    // Prepare: the same request completed reports its prompt; a stream left unread holds the only slot.
    const project = projectOf('json-abort')
    const done = await chat(project, { model: reference.id, messages: long, max_tokens: 2 })
    const { usage } = (await done.json()) as { usage: Usage }
    const holder = await chat(projectOf('holder'), {
      model: reference.id,
      stream: true,
      max_tokens: 512,
      ignore_eos: true,
    })
    const reader = (holder.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    // The engine of the model as the gateway resolved it (its settings pick the engine).
    const scheduler = engineFor(await resolveModel(reference.id, caller.entity)).scheduler
    const aborter = new AbortController()
    const pending = chat(project, { model: reference.id, messages: long, max_tokens: 2 }, aborter.signal)
    await until(
      () => scheduler.waiting,
      (n) => n > 0,
    )

    // Act
    aborter.abort()
    await Promise.resolve(pending).catch(() => undefined)
    await reader.cancel()
    const metered = await until(
      () => counters(project),
      (found) => found.aborted > 0,
    )
    const calls = await tracedCalls(project)

    // Assess
    expect(usage.prompt_tokens).toBeGreaterThan(1_000)
    expect(metered).toMatchObject({ requests: 2, aborted: 1, prompt: 2 * usage.prompt_tokens })
    const left = calls.find((call) => call.exception === 'Client disconnected')
    expect(left?.summary.usage?.[reference.id]).toMatchObject({ prompt_tokens: usage.prompt_tokens, requests: 1 })
  })

  it('meters the cached prompt tokens of a stream the client leaves after its first chunk', async () => {
    // Prepare: the prompt is in the prefix cache; the same request completed reports its cached tokens.
    const warm = projectOf('warm')
    await (await chat(warm, { model: reference.id, messages: long, max_tokens: 2 })).text()
    const done = await chat(warm, { model: reference.id, messages: long, max_tokens: 2 })
    const { usage } = (await done.json()) as { usage: Usage }
    const project = projectOf('stream-abort')
    const res = await chat(project, {
      model: reference.id,
      messages: long,
      stream: true,
      max_tokens: 512,
      ignore_eos: true,
    })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()

    // Act
    await reader.cancel()
    const metered = await until(
      () => counters(project),
      (found) => found.requests > 0,
    )
    const calls = await tracedCalls(project)

    // Assess
    const cached = usage.prompt_tokens_details?.cached_tokens ?? 0
    expect(cached).toBeGreaterThan(0)
    expect(metered).toMatchObject({ requests: 1, aborted: 1, prompt: usage.prompt_tokens, cached })
    expect(calls[0]?.summary.usage?.[reference.id]).toMatchObject({
      prompt_tokens: usage.prompt_tokens,
      cache_read_input_tokens: cached,
      requests: 1,
    })
  })
})
