import { randomUUID } from 'node:crypto'
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { config } from '#shared/config'

/**
 * A real HTTP proxy on 127.0.0.1 in front of the test file's dynalite that injects DynamoDB's own failures: the error
 * bodies and statuses DynamoDB answers (throttling, provisioned throughput, 500, 503), dropped sockets (before the
 * request reached the table, or after it was applied, so the response is lost), delays, and partially processed
 * batches. It counts the requests it saw per operation, so tests can assert that the client retried. A guard, when set,
 * refuses requests with DynamoDB's `AccessDeniedException` before any fault rule applies (IAM as a role would).
 */

/** What to do with a matching request. */
export type DynamoFault =
  | 'throttling'
  | 'provisioned-throughput'
  | 'internal-error'
  | 'unavailable'
  /** Destroy the socket before the request reaches the table. */
  | 'drop'
  /** Forward (the write is applied), then destroy the socket: the client never sees the answer. */
  | 'drop-after-apply'
  /** BatchWriteItem/BatchGetItem: apply only the first half and hand the rest back as unprocessed. */
  | 'unprocessed'
  | { delayMs: number }

/** One programmed fault: which requests it hits and how often. */
export type FaultRule = {
  fault: DynamoFault
  /** Operations it applies to (`BatchWriteItem` or `DynamoDB_20120810.BatchWriteItem`); all when absent. */
  operations?: string[]
  /** Matching requests let through before the fault starts. */
  skip?: number
  /** Matching requests it hits (default: every one until cleared). */
  times?: number
}

/**
 * Judges one request before it reaches the table: the refusal message of an `AccessDeniedException`, or undefined to
 * let it through. `operation` is the `X-Amz-Target` action (`UpdateItem`), `body` the request's JSON.
 */
export type RequestGuard = (operation: string, body: Record<string, unknown>) => string | undefined

/** A running proxy. */
export type DynamoFaultProxy = {
  endpoint: string
  /** Adds a rule; rules are checked in the order they were added, and the first that applies wins. */
  inject: (rule: FaultRule) => void
  /** Removes every rule. */
  clear: () => void
  /** Sets (or, with undefined, removes) the guard that answers `AccessDeniedException`. */
  guard: (guard: RequestGuard | undefined) => void
  /** Requests seen (faulted or not) since the last `resetCounts`, for one operation or all. */
  seen: (operation?: string) => number
  /** Requests seen per operation since the last `resetCounts`. */
  counts: () => Record<string, number>
  resetCounts: () => void
  /** Points the DynamoDB client at the proxy; the returned function points it back. */
  use: () => () => void
  close: () => Promise<void>
}

const PREFIX = 'com.amazonaws.dynamodb.v20120810#'

// DynamoDB's documented answers for these conditions (status, `__type`, message).
const ERRORS: Record<string, { status: number; type: string; message: string }> = {
  throttling: { status: 400, type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  'provisioned-throughput': {
    status: 400,
    type: 'ProvisionedThroughputExceededException',
    message:
      'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  'internal-error': { status: 500, type: 'InternalServerError', message: 'Internal server error' },
  unavailable: { status: 503, type: 'ServiceUnavailable', message: 'Service Unavailable' },
}

type Rule = FaultRule & { matched: number; hit: number }

const opName = (target: string) => target.slice(target.lastIndexOf('.') + 1)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  return Buffer.concat(parts)
}

/** Starts a proxy in front of `target` (default: the endpoint the client uses now, i.e. the file's dynalite). */
export async function startDynamoFaultProxy(target = config.dynamoEndpoint): Promise<DynamoFaultProxy> {
  if (target === undefined) throw new Error('no DynamoDB endpoint to proxy')
  const upstream = new URL(target)
  const agent = new Agent({ keepAlive: true })
  let rules: Rule[] = []
  let guard: RequestGuard | undefined
  const counts = new Map<string, number>()

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          agent,
          headers: { ...req.headers, host: upstream.host, 'content-length': String(body.length) },
        },
        (res) => {
          readAll(res).then((b) => resolve({ status: res.statusCode ?? 500, headers: res.headers, body: b }), reject)
        },
      )
      out.on('error', reject)
      out.end(body)
    })

  const reply = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(Buffer.byteLength(body)),
      'x-amzn-requestid': randomUUID(),
    })
    res.end(body)
  }

  const partially = async (req: IncomingMessage, res: ServerResponse, body: Buffer, op: string) => {
    const parsed = JSON.parse(body.toString('utf8')) as { RequestItems: Record<string, unknown> }
    const [table, requests] = Object.entries(parsed.RequestItems)[0] ?? []
    if (table === undefined) return reply(res, 400, '{}')
    const isWrite = op === 'BatchWriteItem'
    const all = (isWrite ? requests : (requests as { Keys: unknown[] }).Keys) as unknown[]
    const keep = all.slice(0, Math.floor(all.length / 2))
    const rest = all.slice(keep.length)
    let answer: Record<string, unknown> = isWrite ? {} : { Responses: { [table]: [] } }
    if (keep.length > 0) {
      const sent = isWrite ? keep : { ...(requests as object), Keys: keep }
      const forwarded = await forward(req, Buffer.from(JSON.stringify({ ...parsed, RequestItems: { [table]: sent } })))
      answer = JSON.parse(forwarded.body.toString('utf8')) as Record<string, unknown>
    }
    if (isWrite) answer.UnprocessedItems = { [table]: rest }
    else answer.UnprocessedKeys = { [table]: { ...(requests as object), Keys: rest } }
    reply(res, 200, JSON.stringify(answer))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const op = opName(String(req.headers['x-amz-target'] ?? ''))
    counts.set(op, (counts.get(op) ?? 0) + 1)
    const body = await readAll(req)
    const denial = guard?.(op, JSON.parse(body.toString('utf8')) as Record<string, unknown>)
    if (denial !== undefined) {
      // DynamoDB's answer to a request the caller's policies do not allow.
      return reply(res, 400, JSON.stringify({ __type: `${PREFIX}AccessDeniedException`, message: denial }))
    }
    const rule = rules.find((r) => {
      if (r.operations !== undefined && !r.operations.some((o) => opName(o) === op)) return false
      if (r.times !== undefined && r.hit >= r.times) return false
      if (r.fault === 'unprocessed' && op !== 'BatchWriteItem' && op !== 'BatchGetItem') return false
      return true
    })
    let fault: DynamoFault | undefined
    if (rule !== undefined) {
      rule.matched++
      if (rule.matched > (rule.skip ?? 0)) {
        rule.hit++
        fault = rule.fault
      }
    }
    if (fault === 'drop') return req.socket.destroy()
    if (fault === 'unprocessed') return partially(req, res, body, op)
    if (typeof fault === 'string' && fault !== 'drop-after-apply') {
      const error = ERRORS[fault] as { status: number; type: string; message: string }
      return reply(res, error.status, JSON.stringify({ __type: `${PREFIX}${error.type}`, message: error.message }))
    }
    if (typeof fault === 'object') await sleep(fault.delayMs)
    const forwarded = await forward(req, body)
    if (fault === 'drop-after-apply') return req.socket.destroy()
    if (res.destroyed) return
    const headers = { ...forwarded.headers }
    delete headers['transfer-encoding']
    res.writeHead(forwarded.status, headers)
    res.end(forwarded.body)
  }

  // Requests being forwarded: closing waits for them, so a write the proxy already passed on is never cut off while
  // dynalite applies it (the file's dynalite would then close its database under that write).
  const inflight = new Set<Promise<void>>()
  const server = createServer((req, res) => {
    const handling: Promise<void> = handle(req, res)
      .then(
        () => undefined,
        () => {
          req.socket.destroy()
        },
      )
      .finally(() => inflight.delete(handling))
    inflight.add(handling)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    inject: (rule) => {
      rules.push({ ...rule, matched: 0, hit: 0 })
    },
    clear: () => {
      rules = []
    },
    guard: (next) => {
      guard = next
    },
    seen: (operation) =>
      operation === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(opName(operation)) ?? 0),
    counts: () => Object.fromEntries(counts),
    resetCounts: () => counts.clear(),
    use: () => {
      const previous = config.dynamoEndpoint
      config.dynamoEndpoint = endpoint
      return () => {
        config.dynamoEndpoint = previous
      }
    },
    close: async () => {
      await Promise.race([Promise.allSettled([...inflight]), sleep(2_000)])
      await new Promise<void>((resolve) => {
        agent.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
    },
  }
}

/**
 * Registers the test file's hooks for a fault proxy: started and made the DynamoDB endpoint before the tests, real
 * backoff shapes with tiny waits for each test (every retry still happens, the suite stays fast), rules cleared after
 * each test, and everything restored at the end. `onStart` receives the proxy.
 */
export function useDynamoFaultProxy(onStart: (proxy: DynamoFaultProxy) => void): void {
  let proxy: DynamoFaultProxy | undefined
  let restoreEndpoint: (() => void) | undefined
  const saved = { ...config.dynamo }
  beforeAll(async () => {
    proxy = await startDynamoFaultProxy()
    restoreEndpoint = proxy.use()
    onStart(proxy)
  })
  beforeEach(() => {
    Object.assign(config.dynamo, { ...saved, retryBaseMs: 1, retryMaxDelayMs: 5 })
  })
  afterEach(() => {
    proxy?.clear()
  })
  afterAll(async () => {
    Object.assign(config.dynamo, saved)
    restoreEndpoint?.()
    await proxy?.close()
  })
}
