import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  Api,
  ApiError,
  apiBase,
  authorization,
  errorMessage,
  errorSummary,
  fetchSpec,
  NetworkError,
  parseJsonLines,
  requestPurpose,
} from '../../console/src/lib/api.js'
import { annotatorProgress, type QueueItem } from '../../console/src/lib/queues.js'
import { PAGES, parseRoute, routeHash } from '../../console/src/lib/route.js'

describe('authorization', () => {
  it('uses Basic api:<key> for tracing routes and Bearer for /v1', () => {
    expect(authorization('calls/stream_query', 'sk-ü1')).toBe(`Basic ${Buffer.from('api:sk-ü1').toString('base64')}`)
    expect(authorization('v1/usage', 'sk-1')).toBe('Bearer sk-1')
  })
})

describe('apiBase', () => {
  it('is one level above the console, stage prefix included', () => {
    expect(apiBase('http://127.0.0.1:8700/console/#/traces').href).toBe('http://127.0.0.1:8700/')
    expect(apiBase('https://x.execute-api.eu-west-1.amazonaws.com/prod/console/').href).toBe(
      'https://x.execute-api.eu-west-1.amazonaws.com/prod/',
    )
  })
})

describe('errorMessage', () => {
  it('reads every family error shape', () => {
    expect(errorMessage({ reason: 'Authentication failed' }, 401)).toBe('Authentication failed')
    expect(errorMessage({ detail: 'Model not found' }, 404)).toBe('Model not found')
    expect(
      errorMessage({ detail: [{ loc: ['body', 'project_id'], msg: 'Field required', type: 'missing' }] }, 422),
    ).toBe('body.project_id: Field required')
    expect(errorMessage({ error: { message: 'Rate limit', type: 'x', param: null, code: 429 } }, 429)).toBe(
      'Rate limit',
    )
    expect(errorMessage('<html>', 502)).toBe('HTTP 502')
  })
})

describe('errorSummary', () => {
  it('names what the page could not do in words, with the status and the API message, never the path', () => {
    // Prepare
    const refused = new ApiError(401, 'Authentication failed. The key was refused.', 'projects')
    const metrics = new ApiError(500, 'boom', `v1/preview/models/${encodeURIComponent('m/1')}/metrics`)

    // Act + Assess
    expect(errorSummary(refused)).toBe(
      "Could not list this key's projects (HTTP 401): Authentication failed. The key was refused.",
    )
    expect(errorSummary(new ApiError(503, 'spec down', 'openapi.json'))).toBe(
      'Could not load the API reference (HTTP 503): spec down',
    )
    expect(errorSummary(metrics)).toBe("Could not read the model's training metrics (HTTP 500): boom")
    expect(errorSummary(new ApiError(502, 'HTTP 502', 'v1/usage'))).toBe('Could not read the usage report (HTTP 502).')
    expect(errorSummary(new Error('A project is `<entity>/<project>`.'))).toBe('A project is `<entity>/<project>`.')
    expect(errorSummary('odd')).toBe('odd')
  })

  it('has words for every path the console requests, and names an unknown one', () => {
    // Prepare: every request path in the pages (the ids are URL-encoded as the pages send them)
    const paths = [
      'projects',
      'calls/stream_query',
      'calls/query_stats',
      'call/read',
      'feedback/query',
      'feedback/payload_schema',
      'feedback/stats',
      'v1/usage',
      'v1/preview/models',
      'v1/preview/models/abc/metrics',
      'annotation_queues/query',
      'annotation_queues/stats',
      'annotation_queues/q%201/items/query',
      'objs/query',
      'obj/read',
      'table/query_stats',
      'table/query',
      'openapi.json',
    ]

    // Act
    const purposes = paths.map(requestPurpose)

    // Assess
    for (const [i, purpose] of purposes.entries()) expect(purpose, paths[i]).not.toContain('/')
    expect(new Set(purposes).size).toBe(paths.length)
    expect(requestPurpose('calls/delete')).toBe('complete the request to calls/delete')
  })
})

describe('parseJsonLines', () => {
  it('parses complete lines and keeps a partial last line', () => {
    expect(parseJsonLines('{"a":1}\n\n{"b":2}\n{"c"')).toEqual({ values: [{ a: 1 }, { b: 2 }], rest: '{"c"' })
  })
})

describe('Api', () => {
  afterEach(() => vi.unstubAllGlobals())

  it('sends the key to the same origin only, without cookies, and surfaces API errors', async () => {
    // Prepare
    const fetchMock = vi.fn(
      async () => new Response(JSON.stringify({ reason: 'Authentication failed' }), { status: 401 }),
    )
    vi.stubGlobal('fetch', fetchMock)
    const api = new Api('sk-test', 'http://127.0.0.1:8700/console/')

    // Act
    const error = await api.get('projects').catch((e: unknown) => e)

    // Assess
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 401, path: 'projects' })
    // The API's message, and what to do about a refused key (a revoked one, say): sign in again.
    expect((error as ApiError).message).toBe(
      'Authentication failed. The key was refused (revoked, expired or mistyped): sign in again with a valid key.',
    )
    const [url, init] = fetchMock.mock.calls[0] as unknown as [URL, RequestInit]
    expect(url.href).toBe('http://127.0.0.1:8700/projects')
    expect(init.credentials).toBe('omit')
    expect(new Headers(init.headers).get('authorization')).toBe(
      `Basic ${Buffer.from('api:sk-test').toString('base64')}`,
    )
  })

  it('says the server could not be reached, and for which path, when fetch fails', async () => {
    // Prepare: what fetch throws when nothing answers (the server stopped, the network is down)
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch')
      }),
    )
    const api = new Api('k', 'http://127.0.0.1:8700/console/')

    // Act
    const error = await api.post('calls/stream_query', {}).catch((e: unknown) => e)

    // Assess
    expect(error).toBeInstanceOf(NetworkError)
    expect((error as NetworkError).message).toBe(
      'Could not reach the server at http://127.0.0.1:8700 for calls/stream_query: it may be down, or this browser offline (Failed to fetch). Try again later.',
    )
  })

  it('leaves an aborted request an abort, and sends extra headers beside the key', async () => {
    // Prepare
    const fetchMock = vi.fn(async (_url: URL, init: RequestInit) => {
      if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError')
      return new Response('{}', { status: 200 })
    })
    vi.stubGlobal('fetch', fetchMock)
    const api = new Api('k', 'http://h/console/')
    const abort = new AbortController()
    abort.abort()

    // Act
    const aborted = await api.get('v1/usage', {}, abort.signal).catch((e: unknown) => e)
    await api.get('v1/usage', { start: 'x' }, undefined, { 'OpenAI-Project': 'e/p' })

    // Assess
    expect(aborted).toMatchObject({ name: 'AbortError' })
    const [, init] = fetchMock.mock.calls[1] as unknown as [URL, RequestInit]
    expect(new Headers(init.headers).get('openai-project')).toBe('e/p')
    expect(new Headers(init.headers).get('authorization')).toBe('Bearer k')
  })

  it('refuses a path that leaves the origin', async () => {
    // Prepare
    const fetchMock = vi.fn()
    vi.stubGlobal('fetch', fetchMock)
    const api = new Api('sk-test', 'http://127.0.0.1:8700/console/')

    // Act
    const error = await api.get('//evil.example/steal').catch((e: unknown) => e)

    // Assess
    expect(String(error)).toContain('another origin')
    expect(fetchMock).not.toHaveBeenCalled()
  })

  it('streams JSON Lines split across chunks', async () => {
    // Prepare
    const encoder = new TextEncoder()
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('{"id":"a"}\n{"id"'))
        c.enqueue(encoder.encode(':"b"}\n{"id":"c"}'))
        c.close()
      },
    })
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(body, { status: 200 })),
    )
    const batches: string[][] = []

    // Act
    const count = await new Api('k', 'http://h/console/').stream<{ id: string }>('calls/stream_query', {}, (rows) =>
      batches.push(rows.map((r) => r.id)),
    )

    // Assess
    expect(count).toBe(3)
    expect(batches.flat()).toEqual(['a', 'b', 'c'])
  })
})

describe('routes', () => {
  it('names the navigation links exactly as the issue says', () => {
    expect(PAGES.map((p) => p.label)).toEqual([
      'Sign in',
      'Traces',
      'Feedback',
      'Usage',
      'Training',
      'Queues',
      'Objects',
      'API',
    ])
  })

  it('round-trips a trace route with an encoded id and parameters', () => {
    const hash = routeHash('trace', ['t/1 x'], { call: 'c#1' })
    const route = parseRoute(hash)
    expect(route.page).toBe('trace')
    expect(route.parts).toEqual(['t/1 x'])
    expect(route.params.get('call')).toBe('c#1')
  })

  it('falls back to Traces for an unknown or empty hash', () => {
    expect(parseRoute('').page).toBe('traces')
    expect(parseRoute('#/nope').page).toBe('traces')
    expect(parseRoute('#/usage').page).toBe('usage')
  })
})

describe('annotatorProgress', () => {
  it('counts each item under the annotator of its latest state; unstarted items are pending', () => {
    const item = (id: string, state: QueueItem['annotation_state'], annotator: string): QueueItem => ({
      id,
      call_id: id,
      call_op_name: 'op',
      call_trace_id: 't',
      call_started_at: '',
      annotation_state: state,
      annotator_user_id: annotator,
      position_in_queue: null,
    })
    expect(
      annotatorProgress([
        item('1', 'completed', 'bob'),
        item('2', 'skipped', 'bob'),
        item('3', 'in_progress', 'amy'),
        item('4', 'completed', 'amy'),
        item('5', 'unstarted', ''),
      ]),
    ).toEqual({
      annotators: [
        { annotator: 'amy', completed: 1, skipped: 0, in_progress: 1 },
        { annotator: 'bob', completed: 1, skipped: 1, in_progress: 0 },
      ],
      pending: 1,
    })
  })
})

describe('fetchSpec', () => {
  afterEach(() => vi.unstubAllGlobals())

  it('fetches /openapi.json without a key, and turns a failed answer into an ApiError with its message', async () => {
    // Prepare
    const fetchMock = vi.fn(async () => new Response(JSON.stringify({ reason: 'spec down' }), { status: 503 }))
    vi.stubGlobal('fetch', fetchMock)

    // Act
    const error = await fetchSpec('http://127.0.0.1:8700/console/#/api').catch((e: unknown) => e)

    // Assess
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 503, path: 'openapi.json', message: 'spec down' })
    const [url, init] = fetchMock.mock.calls[0] as unknown as [URL, RequestInit]
    expect(url.href).toBe('http://127.0.0.1:8700/openapi.json')
    expect(new Headers(init.headers).get('authorization')).toBeNull()
  })

  it('returns the document of a successful answer', async () => {
    // Prepare
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('{"openapi":"3.1.0"}', { status: 200 })),
    )

    // Act
    const spec = await fetchSpec('http://h/console/')

    // Assess
    expect(spec).toEqual({ openapi: '3.1.0' })
  })
})
