import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import type { ChatBackendCall, ChunkBatch } from '#shared/inference/backend'
import { Cancellation } from '#shared/inference/cancellation'
import { openAiCompatibleBackend } from '#shared/inference/openai-compatible'
import { type StreamItem, sseSource } from '#shared/inference/sse-stream'
import type { StreamOutcome } from '#shared/inference/stream-tally'
import { UpstreamError } from '#shared/inference/upstream-errors'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { startVllmUpstream } from '../../support/vllm-upstream.js'

// An upstream whose streamed answers the test writes piece by piece: each request's response waits in `responses`.
async function scriptedUpstream() {
  const waiting: ((res: ServerResponse) => void)[] = []
  const ready: ServerResponse[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const take = waiting.shift()
      if (take === undefined) ready.push(res)
      else take(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** The next request's response, once it arrived. */
    response: () =>
      new Promise<ServerResponse>((resolve) => {
        const res = ready.shift()
        if (res === undefined) waiting.push(resolve)
        else resolve(res)
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const scripted = await scriptedUpstream()
const vllm = await startVllmUpstream()

afterAll(async () => {
  await scripted.close()
  await vllm.close()
})

function call(baseUrl: string, request: Partial<ChatCompletionRequest> = {}): ChatBackendCall {
  return {
    request: { model: 'served/model', messages: [{ role: 'user', content: 'hi' }], stream: true, ...request },
    model: {
      id: 'served/model',
      backend: { kind: 'openai-compatible', baseUrl, upstreamModel: 'upstream/name' },
      entities: ['e'],
    },
    requestId: 'req-1',
    created: 1,
    signal: new Cancellation(),
  }
}

const up = '"id":"chatcmpl-up","object":"chat.completion.chunk","created":9,"model":"upstream/name"'
const usage = (n: number) => `"usage":{"prompt_tokens":3,"total_tokens":${3 + n},"completion_tokens":${n}}`
const ROLE = `{${up},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null,${usage(0)}}`
const WAVE = `{${up},"choices":[{"index":0,"delta":{"content":"👋 héllo"},"logprobs":null,"finish_reason":null}],${usage(1)}}`
const TWO = `{${up},"choices":[{"index":0,"delta":{"content":" two"},"logprobs":null,"finish_reason":null}],${usage(2)}}`
const LAST = `{${up},"choices":[{"index":0,"delta":{"content":"!"},"logprobs":null,"finish_reason":"stop","stop_reason":null}],${usage(3)}}`
const FINAL = `{${up},"choices":[],"usage":{"prompt_tokens":3,"total_tokens":6,"completion_tokens":3}}`
const event = (json: string) => `data: ${json}\n\n`
const ours = (json: string) =>
  json.replace('"chatcmpl-up"', '"chatcmpl-req-1"').replace('"upstream/name"', '"served/model"')

/** An upstream chunk as the event a client that asked for no usage gets. */
const sent = (json: string) => {
  const { usage: _usage, ...chunk } = JSON.parse(ours(json)) as Record<string, unknown>
  return `data: ${JSON.stringify(chunk)}`
}

/** The SSE text a client gets of `iterator`'s stream, and its outcome; `opened` runs once the stream is asked for. */
async function sseText(
  iterator: AsyncIterator<StreamItem>,
  request: ReturnType<typeof call>['request'],
  collect: boolean,
  opened: () => Promise<void> = async () => undefined,
): Promise<{ text: string; outcome: StreamOutcome | undefined }> {
  let outcome: StreamOutcome | undefined
  const source = sseSource(iterator, {
    request,
    first: iterator.next(),
    waiting: false,
    collect,
    abort: () => undefined,
    onEnd: async (o) => {
      outcome = o
    },
  })
  await opened()
  let text = ''
  for (;;) {
    const piece = await source.next()
    text += piece.text
    if (piece.last) break
  }
  await source.finish()
  return { text, outcome }
}

/** The SSE body a client gets of a stream whose upstream answer the test writes with `write`. */
async function clientEvents(
  write: (res: ServerResponse) => void,
): Promise<{ events: string[]; outcome: StreamOutcome | undefined }> {
  const c = call(scripted.baseUrl)
  const iterator = openAiCompatibleBackend.streamBatches?.(c)[Symbol.asyncIterator]() as AsyncIterator<StreamItem>
  const { text, outcome } = await sseText(iterator, c.request, false, async () => write(await scripted.response()))
  return { events: text.split('\n\n').filter((e) => e !== ''), outcome }
}

/** Writes `pieces` as separate reads of the upstream's body, then ends it. */
function inReads(res: ServerResponse, pieces: string[]): void {
  const next = (i: number) => {
    if (i === pieces.length) return res.end()
    // A pause between writes keeps them separate reads on the gateway's side.
    res.write(pieces[i], () => setTimeout(() => next(i + 1), 10))
  }
  next(0)
}

describe('openai-compatible streams, a batch per upstream read', () => {
  it('hands over the complete events of each read, an event split across reads once it is whole', async () => {
    // Prepare
    const iterator = openAiCompatibleBackend.streamBatches?.(call(scripted.baseUrl))[Symbol.asyncIterator]()
    const first = iterator?.next()
    const res = await scripted.response()
    const wave = Buffer.from(event(WAVE))
    // Splits the 4-byte 👋 between two reads.
    const cut = wave.indexOf(Buffer.from('👋')) + 2

    // Act
    res.write(Buffer.concat([Buffer.from(event(ROLE)), wave.subarray(0, cut)]))
    const a = (await first)?.value as ChunkBatch
    // The rest of it, an event whose data spans two lines, and one framed with CRLF.
    const line = TWO.indexOf('"choices"')
    res.write(
      Buffer.concat([wave.subarray(cut), Buffer.from(`data: ${TWO.slice(0, line)}\ndata: ${TWO.slice(line)}\n\n`)]),
    )
    res.write(event(LAST).replaceAll('\n', '\r\n'))
    // However the reads fall, these three events come in one or two batches.
    const middle: ChunkBatch[] = []
    while (middle.flatMap((batch) => batch.chunks).length < 3)
      middle.push((await iterator?.next())?.value as ChunkBatch)
    res.end(`${event(FINAL)}data: [DONE]\n\n`)
    const d = (await iterator?.next())?.value as ChunkBatch
    const end = await iterator?.next()

    // Assess
    expect(a.chunks.map((x) => x.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }])
    expect(a.json[0]?.text).toBe(ours(ROLE))
    const chunks = middle.flatMap((batch) => batch.chunks)
    expect(chunks.map((x) => x.choices[0]?.delta.content)).toEqual(['👋 héllo', ' two', '!'])
    expect(chunks.every((x) => x.id === 'chatcmpl-req-1' && x.model === 'served/model')).toBe(true)
    // A data field of two lines is joined with a line break, which no `data:` line can carry: it is serialised.
    expect(middle.flatMap((batch) => batch.json).map((j) => j?.text)).toEqual([ours(WAVE), undefined, ours(LAST)])
    expect(middle.map((batch) => batch.complete)).toEqual(middle.map(() => false))
    expect(d.chunks).toEqual([JSON.parse(ours(FINAL))])
    expect(d.complete).toBe(true)
    expect(end?.done).toBe(true)
  })

  it('hands over the chunks before an error event, then fails with its status', async () => {
    // Prepare
    const iterator = openAiCompatibleBackend.streamBatches?.(call(scripted.baseUrl))[Symbol.asyncIterator]()
    const first = iterator?.next()
    const res = await scripted.response()
    const error = { error: { message: 'bad input', type: 'BadRequestError', param: null, code: 400 } }

    // Act
    res.end(`${event(ROLE)}${event(WAVE)}data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`)
    const batch = (await first)?.value as ChunkBatch
    const failure = await iterator?.next().then(
      () => undefined,
      (e: unknown) => e,
    )

    // Assess
    expect(batch.chunks).toHaveLength(2)
    expect(failure).toBeInstanceOf(UpstreamError)
    expect(failure).toMatchObject({ statusCode: 400, message: 'bad input' })
  })

  it('reads CRLF-framed events whose CRLF is cut between two reads, and CR-framed ones', async () => {
    // Prepare: sse-starlette (llama-cpp-python) frames with CRLF; the SSE spec also allows a bare CR.
    const crlf = [event(ROLE), event(WAVE), event(LAST), event(FINAL), 'data: [DONE]\n\n']
      .join('')
      .replaceAll('\n', '\r\n')
    const cuts = [...crlf.matchAll(/\r\n/g)].map((m) => (m.index as number) + 1)
    const cr = crlf.replaceAll('\r\n', '\r')

    // Act: every CRLF of the first body cut after its CR; the second cut after each CR too.
    const pieces = (text: string, at: number[]) =>
      at.map((end, i) => text.slice(at[i - 1] ?? 0, end)).concat(text.slice(at.at(-1)))
    const crlfRun = await clientEvents((res) => inReads(res, pieces(crlf, cuts)))
    const crRun = await clientEvents((res) =>
      inReads(
        res,
        pieces(
          cr,
          [...cr.matchAll(/\r/g)].map((m) => (m.index as number) + 1),
        ),
      ),
    )

    // Assess
    for (const { events } of [crlfRun, crRun]) {
      expect(events.map((e) => (e === 'data: [DONE]' ? e : JSON.parse(e.slice(6)).choices[0]?.delta.content))).toEqual([
        '',
        '👋 héllo',
        '!',
        'data: [DONE]',
      ])
    }
  })

  it("sends the chunks before vLLM's flat error event, then that error in the contract's shape", async () => {
    // Prepare: vLLM's ErrorResponse, written as an SSE event by older versions.
    const flat = { object: 'error', message: 'flat mid-stream error', type: 'BadRequestError', param: null, code: 400 }

    // Act: all in one read (one batch), and the error in a read of its own.
    const oneRead = await clientEvents((res) =>
      res.end(`${event(ROLE)}${event(WAVE)}${event(JSON.stringify(flat))}data: [DONE]\n\n`),
    )
    const apart = await clientEvents((res) =>
      inReads(res, [event(ROLE), event(WAVE), event(JSON.stringify(flat)), 'data: [DONE]\n\n']),
    )

    // Assess
    const error = { error: { message: 'flat mid-stream error', type: 'BadRequestError', param: null, code: 400 } }
    for (const { events } of [oneRead, apart]) {
      expect(events).toEqual([sent(ROLE), sent(WAVE), `data: ${JSON.stringify(error)}`, 'data: [DONE]'])
    }
  })

  it('sends the chunks read with an event that is no chunk (no choices) before the error it becomes', async () => {
    // Act
    const { events } = await clientEvents((res) =>
      res.end(`${event(ROLE)}${event(WAVE)}${event(`{${up}}`)}data: [DONE]\n\n`),
    )

    // Assess
    expect(events.slice(0, 2)).toEqual([sent(ROLE), sent(WAVE)])
    expect(JSON.parse(events[2]?.slice(6) ?? '')).toMatchObject({ error: { code: 500, type: 'InternalServerError' } })
    expect(events[3]).toBe('data: [DONE]')
  })

  it('ends a stream closed without [DONE] as usual once every choice finished, else with an error', async () => {
    // Act
    const finished = await clientEvents((res) => res.end(`${event(ROLE)}${event(WAVE)}${event(LAST)}${event(FINAL)}`))
    const unfinished = await clientEvents((res) => res.end(`${event(ROLE)}${event(WAVE)}`))

    // Assess
    expect(finished.events).toEqual([sent(ROLE), sent(WAVE), sent(LAST), 'data: [DONE]'])
    expect(finished.outcome).toMatchObject({ usage: { prompt_tokens: 3, completion_tokens: 3 }, error: undefined })
    expect(unfinished.events.at(-2)).toContain('"InternalServerError"')
    expect(unfinished.events.at(-1)).toBe('data: [DONE]')
  })

  it("serialises a hosted API's chunk that lacks vLLM's keys, with them filled in, and ignores events after [DONE]", async () => {
    // Prepare
    const iterator = openAiCompatibleBackend.streamBatches?.(call(scripted.baseUrl))[Symbol.asyncIterator]()
    const first = iterator?.next()
    const res = await scripted.response()
    const hosted = `{${up},"system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`

    // Act
    res.end(`${event(hosted)}data: [DONE]\n\n${event(WAVE)}`)
    const batch = (await first)?.value as ChunkBatch
    const end = await iterator?.next()

    // Assess
    expect(batch.json).toEqual([undefined])
    expect(batch.chunks[0]?.choices[0]).toEqual({
      index: 0,
      delta: { content: 'x' },
      finish_reason: 'stop',
      logprobs: null,
      stop_reason: null,
    })
    expect(batch.complete).toBe(true)
    expect(end?.done).toBe(true)
  })

  it('frames the same events and meters the same outcome whether chunks go out from their text or serialised', async () => {
    // Prepare: a vLLM-like upstream (continuous usage on every chunk), every usage option a client can ask for.
    const reply = 'Ünïcödé 👋 "quoted" {braces} \\ back\\slash "usage":{} end'
    const options = [
      undefined,
      { include_usage: true },
      { include_usage: true, continuous_usage_stats: true },
      { include_usage: false, continuous_usage_stats: true },
    ]
    const run = async (streamOptions: (typeof options)[number], batched: boolean) => {
      const c = call(vllm.baseUrl, {
        messages: [{ role: 'user', content: 'hi' }],
        ...(streamOptions === undefined ? {} : { stream_options: streamOptions }),
      })
      const items: AsyncIterable<StreamItem> = batched
        ? (openAiCompatibleBackend.streamBatches?.(c) as AsyncIterable<StreamItem>)
        : openAiCompatibleBackend.stream(c)
      const { text, outcome } = await sseText(items[Symbol.asyncIterator](), c.request, true)
      const events = text
        .split('\n\n')
        .filter((e) => e !== '')
        .map((e) => (e === 'data: [DONE]' ? e : JSON.parse(e.replace(/^data: /, ''))))
        // Each run is its own upstream request, answered at its own second.
        .map((e) => (typeof e === 'object' ? { ...e, created: 0 } : e))
      return { events, outcome }
    }

    // Act
    vllm.behave({ reply })
    const results = []
    for (const o of options) results.push({ batched: await run(o, true), serialised: await run(o, false) })

    // Assess
    for (const { batched, serialised } of results) {
      expect(batched.events).toEqual(serialised.events)
      expect(batched.outcome).toEqual(serialised.outcome)
      expect(batched.events.at(-1)).toBe('data: [DONE]')
      expect(batched.outcome?.contents).toEqual([reply])
    }
    const data = (events: unknown[]) => events.filter((e): e is { usage?: unknown } => typeof e === 'object')
    const withUsage = results.map((r) => data(r.batched.events).filter((e) => 'usage' in e).length)
    // No usage; the final usage chunk only; usage on every chunk; none without include_usage.
    expect(withUsage).toEqual([0, 1, data(results[2]?.batched.events ?? []).length, 0])
  })
})
