// The console's only way to the network: same-origin requests to Loom's public API, with the key from the session.
// Tracing routes take `Basic base64("api:" + key)` (as the Weave SDKs send it), `/v1` routes `Bearer <key>`.

/** An error answer of the API, with the message its family's error body carries. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly path: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/**
 * The request never got an answer: the server is down or unreachable, or the network is offline (`fetch` says only
 * "Failed to fetch"). The message names the path and the server's address.
 */
export class NetworkError extends Error {
  constructor(
    readonly path: string,
    origin: string,
    cause: unknown,
  ) {
    const why = cause instanceof Error && cause.message !== '' ? ` (${cause.message})` : ''
    super(
      `Could not reach the server at ${origin} for ${path}: it may be down, or this browser offline${why}. Try again later.`,
      { cause },
    )
    this.name = 'NetworkError'
  }
}

// What a refused key means for the user: the page keeps the key for the tab, so only signing in again with a valid
// one (the Sign in link at the top) gets past it.
const SIGN_IN_AGAIN = 'The key was refused (revoked, expired or mistyped): sign in again with a valid key.'

/** The message an error answer is shown with: the API's own message, and for a refused key (401) what to do. */
export function errorText(body: unknown, status: number): string {
  const message = errorMessage(body, status)
  return status === 401 ? `${message}. ${SIGN_IN_AGAIN}` : message
}

/** The message of an error body in any family's shape: `{reason}`, `{detail}` (string or issues), `{error: {message}}`. */
export function errorMessage(body: unknown, status: number): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as Record<string, unknown>
    if (typeof b.reason === 'string') return b.reason
    if (typeof b.detail === 'string') return b.detail
    if (Array.isArray(b.detail)) {
      return b.detail
        .map((d) => {
          const issue = d as { loc?: unknown[]; msg?: string }
          return `${(issue.loc ?? []).join('.')}: ${issue.msg ?? ''}`
        })
        .join('; ')
    }
    const error = b.error as { message?: unknown } | undefined
    if (typeof error?.message === 'string') return error.message
  }
  return `HTTP ${status}`
}

// What each request the console sends reads, in the words an error message uses ("Could not read the usage report"):
// a user knows what the page was showing, not the API's paths.
const PURPOSES: [RegExp, string][] = [
  [/^projects$/, "list this key's projects"],
  [/^calls\/stream_query$/, 'read the calls'],
  [/^calls\/query_stats$/, 'count the calls'],
  [/^call\/read$/, 'read the call'],
  [/^feedback\/query$/, 'read the feedback'],
  [/^feedback\/payload_schema$/, "read the feedback's fields"],
  [/^feedback\/stats$/, 'read the feedback statistics'],
  [/^v1\/usage$/, 'read the usage report'],
  [/^v1\/preview\/models$/, 'list the models'],
  [/^v1\/preview\/models\/[^/]+\/metrics$/, "read the model's training metrics"],
  [/^annotation_queues\/query$/, 'list the annotation queues'],
  [/^annotation_queues\/stats$/, "read the annotation queues' progress"],
  [/^annotation_queues\/[^/]+\/items\/query$/, "read the queue's items"],
  [/^objs\/query$/, 'read the objects'],
  [/^obj\/read$/, 'read the object'],
  [/^table\/query_stats$/, "count the table's rows"],
  [/^table\/query$/, "read the table's rows"],
  [/^openapi\.json$/, 'load the API reference'],
]

/** What a request to `path` was for, as a verb phrase: `read the usage report` for `v1/usage`. */
export function requestPurpose(path: string): string {
  return PURPOSES.find(([pattern]) => pattern.test(path))?.[1] ?? `complete the request to ${path}`
}

/**
 * An error as a page shows it: for an error answer what the page could not do, the status and the API's message
 * ("Could not read the usage report (HTTP 401): Authentication failed. …"); for any other error its message.
 */
export function errorSummary(error: unknown): string {
  if (error instanceof ApiError) {
    const failed = `Could not ${requestPurpose(error.path)} (HTTP ${error.status})`
    // A body without a message reads as the status alone (`errorMessage`), which the summary already says.
    return error.message === `HTTP ${error.status}` ? `${failed}.` : `${failed}: ${error.message}`
  }
  return error instanceof Error ? error.message : String(error)
}

/** Where the API lives: the console is served at `<base>/console/`, so the API is one level up (a deployed stage too). */
export function apiBase(href: string): URL {
  return new URL('../', href)
}

/** The `Authorization` header for a route: Bearer for `/v1`, Basic `api:<key>` for tracing routes. */
export function authorization(path: string, key: string): string {
  if (path.startsWith('v1/')) return `Bearer ${key}`
  const bytes = new TextEncoder().encode(`api:${key}`)
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return `Basic ${btoa(binary)}`
}

/** Splits JSON Lines text into parsed values; the last, unterminated line is returned as `rest`. */
export function parseJsonLines(text: string): { values: unknown[]; rest: string } {
  const lines = text.split('\n')
  const rest = lines.pop() ?? ''
  const values: unknown[] = []
  for (const line of lines) if (line.trim() !== '') values.push(JSON.parse(line))
  return { values, rest }
}

/** An error answer's body: its JSON, or its text where it is not JSON (a proxy's page: the status says enough). */
async function errorBody(res: Response): Promise<unknown> {
  const text = await res.text()
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The OpenAPI document (`GET /openapi.json`, no key) for the API page, which hands it to Swagger UI: a failure is an
 * `ApiError` (status, path, the API's message) or a `NetworkError`, shown like any other, not Swagger UI's own notice.
 */
export async function fetchSpec(href: string, signal?: AbortSignal): Promise<unknown> {
  const path = 'openapi.json'
  const url = new URL(path, apiBase(href))
  let res: Response
  try {
    res = await fetch(url, { credentials: 'omit', referrerPolicy: 'no-referrer', ...(signal ? { signal } : {}) })
  } catch (error) {
    if (signal?.aborted === true) throw error
    throw new NetworkError(path, url.origin, error)
  }
  if (!res.ok) throw new ApiError(res.status, errorMessage(await errorBody(res), res.status), path)
  return res.json()
}

/** A client bound to one key. */
export class Api {
  private readonly base: URL

  constructor(
    private readonly key: string,
    /** The console page's URL (`location.href`): the API is resolved against it. */
    href: string,
  ) {
    this.base = apiBase(href)
  }

  private url(path: string, query?: Record<string, string | undefined>): URL {
    const url = new URL(path, this.base)
    // The key never leaves Loom's own origin, whatever a caller passes as a path.
    if (url.origin !== this.base.origin) throw new Error(`Refusing a request to another origin: ${url.origin}`)
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, v)
    return url
  }

  private async send(path: string, init: RequestInit & { query?: Record<string, string | undefined> }) {
    const { query, ...rest } = init
    const headers = new Headers(rest.headers)
    headers.set('Authorization', authorization(path, this.key))
    const url = this.url(path, query)
    let res: Response
    try {
      res = await fetch(url, { ...rest, headers, credentials: 'omit', referrerPolicy: 'no-referrer' })
    } catch (error) {
      // An abort is the page's own doing (it moved on): it stays an AbortError, which the pages ignore.
      if (init.signal?.aborted === true) throw error
      throw new NetworkError(path, url.origin, error)
    }
    if (!res.ok) throw new ApiError(res.status, errorText(await errorBody(res), res.status), path)
    return res
  }

  /** `POST <path>` with a JSON body, answered in JSON. */
  async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.send(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal === undefined ? {} : { signal }),
    })
    return (await res.json()) as T
  }

  /** `GET <path>?query`, answered in JSON; `headers` are sent besides the key's. */
  async get<T>(
    path: string,
    query?: Record<string, string | undefined>,
    signal?: AbortSignal,
    headers?: Record<string, string>,
  ): Promise<T> {
    const res = await this.send(path, {
      method: 'GET',
      ...(query === undefined ? {} : { query }),
      ...(signal === undefined ? {} : { signal }),
      ...(headers === undefined ? {} : { headers }),
    })
    return (await res.json()) as T
  }

  /** `POST <path>` answered in JSON Lines: `onRows` gets each batch of parsed lines as it arrives. */
  async stream<T>(path: string, body: unknown, onRows: (rows: T[]) => void, signal?: AbortSignal): Promise<number> {
    const res = await this.send(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/jsonl' },
      body: JSON.stringify(body),
      ...(signal === undefined ? {} : { signal }),
    })
    let count = 0
    let buffer = ''
    const decoder = new TextDecoder()
    const reader = res.body?.getReader()
    if (reader === undefined) return 0
    for (;;) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        // The connection broke mid-answer (the server stopped, the network went away).
        if (signal?.aborted === true) throw error
        throw new NetworkError(path, this.base.origin, error)
      })
      buffer += decoder.decode(value, { stream: !done })
      const { values, rest } = parseJsonLines(done ? `${buffer}\n` : buffer)
      buffer = rest
      if (values.length > 0) {
        count += values.length
        onRows(values as T[])
      }
      if (done) return count
    }
  }
}
