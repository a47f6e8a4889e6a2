import '../support/lambda-shim.js'
import { createHash, randomUUID } from 'node:crypto'
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FUNCTIONS, type FunctionEntry, type FunctionId, type RouteEntry } from '#functions/manifest'
import { db, table } from '#shared/db/client'
import { settleAfterResponse } from '#shared/http/after-response'
import { flushUsage } from '#shared/inference/usage-meter'
import { loadFunction } from '../../scripts/local/app.js'
import { endPart, startPart, writeCalls } from '../support/calls.js'
import { upstreamModelFixture } from '../support/models.js'
import { publish } from '../support/objects.js'
import { addCalls, newQueue } from '../support/queues.js'
import { declaredRoute } from '../support/route-probes.js'
import { send } from '../support/tracing.js'
import { newModel, trajectory } from '../support/training.js'

// DynamoDB's documented limits (2,048-byte partition keys, 1,024-byte sort keys, 400 KB items) against every write
// endpoint: one string of the request at a time is made long or huge. Each answer is a 2xx or the family's 4xx, and
// after a 4xx the table holds exactly what it held before the request. Seeded: the same cases on every run and engine.
const SEED = Number(process.env.LOOM_LIMITS_SEED ?? 0x14b)
// Cases per string field (every field of every write route is exercised).
const RUNS_PER_FIELD = Number(process.env.LOOM_LIMITS_RUNS ?? 1)
const SIZES = [1024, 2049, 64 * 1024, 400 * 1024, 1536 * 1024]
const CHARS = ['x', 'é', '🙂']

const { caller, model } = await upstreamModelFixture()

/** A request as data: every string in it (object keys included) is a field the property may stretch. */
type Shape = {
  params: Record<string, string>
  query: Record<string, string>
  headers: Record<string, string>
  body?: unknown
  /** Multipart fields instead of a JSON body (`file/create`); the file's name is the `filename` field. */
  form?: Record<string, string>
}

type Template = {
  /** The write function whose (first) declared route the template calls. */
  fn: FunctionId
  /** Writes what the request needs (a call, an object, a queue…) in a fresh project; returns ids for the shape. */
  setup?: (project: string) => Promise<Record<string, string>>
  shape: (project: string, v: Record<string, string>) => Shape
}

const tracingAuth = () => caller.basic
const start = (project: string, id: string) =>
  startPart(project, {
    id,
    trace_id: randomUUID(),
    parent_id: randomUUID(),
    thread_id: 'thread',
    display_name: 'name',
    attributes: { key: 'value' },
    inputs: { prompt: 'hello' },
  })
const end = (project: string, id: string) =>
  endPart(project, id, { output: { text: 'out' }, summary: { note: 's' }, exception: 'boom' })
const feedback = (project: string) => ({
  project_id: project,
  weave_ref: `weave:///${project}/call/c1`,
  feedback_type: 'custom',
  payload: { note: 'n' },
  creator: 'me',
  span_agent_name: 'agent',
})
// An OTLP/JSON export of one span (the OpenTelemetry protocol's JSON encoding).
const otlpJson = () => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      scopeSpans: [
        {
          scope: { name: 'scope', version: '1' },
          spans: [
            {
              traceId: randomUUID().replace(/-/g, ''),
              spanId: randomUUID().replace(/-/g, '').slice(0, 16),
              name: 'span',
              kind: 1,
              startTimeUnixNano: '1735787045000000000',
              endTimeUnixNano: '1735787046000000000',
              attributes: [{ key: 'input.value', value: { stringValue: 'hello' } }],
              status: {},
            },
          ],
        },
      ],
    },
  ],
})
const oneCall = async (project: string) => {
  const id = randomUUID()
  await writeCalls(caller, [{ start: startPart(project, { id }), end: endPart(project, id) }])
  return id
}
// A one-row table in the project: its digest and its row's digest.
const tableOf = async (project: string) => {
  const { app } = await loadFunction(entryOf('tracing/create-table'))
  const res = await send(
    app as never,
    '/table/create',
    { table: { project_id: project, rows: [{ column: 'value' }] } },
    caller,
  )
  return { digest: res.body.digest as string, row: res.body.row_digests[0] as string }
}
const feedbackId = async (project: string) => {
  const { app } = await loadFunction(entryOf('tracing/create-feedback'))
  const res = await send(app as never, '/feedback/create', feedback(project), caller)
  return res.body.id as string
}

const TEMPLATES: Template[] = [
  { fn: 'tracing/start-call', shape: (p) => ({ ...none(), body: { start: start(p, randomUUID()) } }) },
  { fn: 'tracing/end-call', shape: (p) => ({ ...none(), body: { end: end(p, randomUUID()) } }) },
  {
    fn: 'tracing/upsert-call-batch',
    shape: (p) => {
      const id = randomUUID()
      return {
        ...none(),
        body: {
          batch: [
            { mode: 'start', req: { start: start(p, id) } },
            { mode: 'end', req: { end: end(p, id) } },
          ],
        },
      }
    },
  },
  {
    fn: 'tracing/export-otel-traces',
    shape: (p) => ({ ...none(), headers: { project_id: p }, body: otlpJson() }),
  },
  {
    fn: 'tracing/update-call',
    setup: async (p) => ({ call: await oneCall(p) }),
    shape: (p, v) => ({ ...none(), body: { project_id: p, call_id: v.call, display_name: 'renamed' } }),
  },
  {
    fn: 'tracing/delete-calls',
    setup: async (p) => ({ call: await oneCall(p) }),
    shape: (p, v) => ({ ...none(), body: { project_id: p, call_ids: [v.call] } }),
  },
  {
    fn: 'tracing/create-cost',
    shape: (p) => ({
      ...none(),
      body: {
        project_id: p,
        costs: { 'llm-x': { prompt_token_cost: 1, completion_token_cost: 2, provider_id: 'pr' } },
      },
    }),
  },
  {
    fn: 'tracing/purge-cost',
    shape: (p) => ({
      ...none(),
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'cost-id' }] } } },
    }),
  },
  {
    fn: 'tracing/create-obj',
    shape: (p) => ({ ...none(), body: { obj: { project_id: p, object_id: 'obj', val: { field: 'value' } } } }),
  },
  {
    fn: 'tracing/delete-obj',
    setup: async (p) => ({ digest: await publish({ ...caller, project: p }, 'obj', { a: 1 }) }),
    shape: (p, v) => ({ ...none(), body: { project_id: p, object_id: 'obj', digests: [v.digest] } }),
  },
  {
    fn: 'tracing/add-obj-tags',
    setup: async (p) => ({ digest: await publish({ ...caller, project: p }, 'obj', { a: 1 }) }),
    shape: (p, v) => ({
      ...none(),
      params: { object_id: 'obj', digest: v.digest ?? '' },
      body: { project_id: p, tags: ['tag'] },
    }),
  },
  {
    fn: 'tracing/remove-obj-tags',
    setup: async (p) => ({ digest: await publish({ ...caller, project: p }, 'obj', { a: 1 }) }),
    shape: (p, v) => ({
      ...none(),
      params: { object_id: 'obj', digest: v.digest ?? '' },
      body: { project_id: p, tags: ['tag'] },
    }),
  },
  {
    fn: 'tracing/set-obj-aliases',
    setup: async (p) => ({ digest: await publish({ ...caller, project: p }, 'obj', { a: 1 }) }),
    shape: (p, v) => ({
      ...none(),
      params: { object_id: 'obj' },
      body: { project_id: p, digest: v.digest, aliases: ['prod'] },
    }),
  },
  {
    fn: 'tracing/remove-obj-aliases',
    setup: async (p) => ({ digest: await publish({ ...caller, project: p }, 'obj', { a: 1 }) }),
    shape: (p) => ({ ...none(), params: { object_id: 'obj' }, body: { project_id: p, aliases: ['prod'] } }),
  },
  { fn: 'tracing/create-feedback', shape: (p) => ({ ...none(), body: { ...feedback(p), id: 'client-id' } }) },
  { fn: 'tracing/create-feedback-batch', shape: (p) => ({ ...none(), body: { batch: [feedback(p), feedback(p)] } }) },
  {
    fn: 'tracing/purge-feedback',
    setup: async (p) => ({ id: await feedbackId(p) }),
    shape: (p, v) => ({
      ...none(),
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: v.id }] } } },
    }),
  },
  {
    fn: 'tracing/replace-feedback',
    setup: async (p) => ({ id: await feedbackId(p) }),
    shape: (p, v) => ({ ...none(), body: { ...feedback(p), feedback_id: v.id } }),
  },
  {
    fn: 'tracing/create-annotation-queue',
    shape: (p) => ({
      ...none(),
      body: { project_id: p, name: 'queue', description: 'd', scorer_refs: [`weave:///${p}/object/s:1`] },
    }),
  },
  {
    fn: 'tracing/update-annotation-queue',
    setup: async (p) => ({ queue: await newQueue({ ...caller, project: p }) }),
    shape: (p, v) => ({
      ...none(),
      params: { queue_id: v.queue ?? '' },
      body: { project_id: p, name: 'renamed', description: 'new' },
    }),
  },
  {
    fn: 'tracing/delete-annotation-queue',
    setup: async (p) => ({ queue: await newQueue({ ...caller, project: p }) }),
    shape: (p, v) => ({ ...none(), params: { queue_id: v.queue ?? '' }, query: { project_id: p } }),
  },
  {
    fn: 'tracing/add-annotation-queue-items',
    setup: async (p) => ({ queue: await newQueue({ ...caller, project: p }), call: await oneCall(p) }),
    shape: (p, v) => ({
      ...none(),
      params: { queue_id: v.queue ?? '' },
      body: { project_id: p, call_ids: [v.call], display_fields: ['input.prompt'] },
    }),
  },
  {
    fn: 'tracing/update-annotation-queue-item-progress',
    setup: async (p) => {
      const queue = await newQueue({ ...caller, project: p })
      await addCalls({ ...caller, project: p }, queue, [await oneCall(p)])
      const { app } = await loadFunction(entryOf('tracing/query-annotation-queue-items'))
      const items = await send(app as never, `/annotation_queues/${queue}/items/query`, { project_id: p }, caller)
      return { queue, item: items.body.items[0].id }
    },
    shape: (p, v) => ({
      ...none(),
      params: { queue_id: v.queue ?? '', item_id: v.item ?? '' },
      body: { project_id: p, annotation_state: 'in_progress' },
    }),
  },
  {
    fn: 'tracing/create-table',
    shape: (p) => ({ ...none(), body: { table: { project_id: p, rows: [{ column: 'value' }, { other: 'x' }] } } }),
  },
  {
    fn: 'tracing/update-table',
    setup: tableOf,
    shape: (p, v) => ({
      ...none(),
      body: {
        project_id: p,
        base_digest: v.digest ?? '',
        updates: [
          { append: { row: { column: 'appended' } } },
          { insert: { index: 0, row: { other: 'x' } } },
          { pop: { index: 1 } },
        ],
      },
    }),
  },
  {
    fn: 'tracing/create-table-from-digests',
    setup: tableOf,
    shape: (p, v) => ({ ...none(), body: { project_id: p, row_digests: [v.row ?? '', v.row ?? ''] } }),
  },
  {
    fn: 'tracing/create-file',
    shape: (p) => ({ ...none(), form: { project_id: p, filename: 'image.png', content: 'file bytes' } }),
  },
  {
    fn: 'training/create-preview-model',
    shape: (p) => ({
      ...none(),
      body: { entity: caller.entity, project: p.split('/')[1], name: 'model', base_model: 'Qwen/Qwen2.5-7B-Instruct' },
    }),
  },
  {
    fn: 'training/delete-preview-model',
    setup: async () => ({ model: (await newModel(caller)).id }),
    shape: (_p, v) => ({ ...none(), params: { model_id: v.model ?? '' } }),
  },
  {
    fn: 'training/log-trajectories',
    setup: async () => ({ model: (await newModel(caller)).id }),
    shape: (_p, v) => ({
      ...none(),
      params: { model_id: v.model ?? '' },
      body: {
        model_id: v.model,
        split: 'train',
        trajectory_groups: [{ trajectories: [trajectory(1, { correct: true })], metrics: { m: 1 }, exceptions: [] }],
      },
    }),
  },
  {
    fn: 'inference/create-chat-completion',
    shape: (p) => ({
      ...none(),
      headers: { 'openai-project': p },
      body: { model, messages: [{ role: 'user', content: 'Hello' }], user: 'someone' },
    }),
  },
]

function none(): Shape {
  return { params: {}, query: {}, headers: {} }
}

function entryOf(id: FunctionId): FunctionEntry {
  const entry = FUNCTIONS.find((f) => f.id === id)
  if (entry === undefined) throw new Error(`no function ${id}`)
  return entry
}

/** A path to one string of a shape: the keys and indexes leading to it, and whether it is an object key itself. */
type Leaf = { path: (string | number)[]; isKey: boolean }

function leaves(value: unknown, path: (string | number)[] = []): Leaf[] {
  if (typeof value === 'string') return [{ path, isKey: false }]
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([k, v]) => [
    // The top-level groups (params, body…), multipart field names and header names are not request strings.
    ...(path.length === 0 || path[0] === 'form' || path[0] === 'headers' ? [] : [{ path: [...path, k], isKey: true }]),
    ...leaves(v, [...path, k]),
  ])
}

/** The shape with the string at `leaf` replaced by `make(old)` (a key is renamed in place, keeping its value). */
function stretch(shape: Shape, leaf: Leaf, make: (old: string) => string): Shape {
  const copy = structuredClone(shape) as unknown as Record<string | number, unknown>
  let parent = copy as Record<string | number, unknown>
  for (const step of leaf.path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>
  const last = leaf.path.at(-1) as string | number
  if (leaf.isKey) {
    const entries = Object.entries(parent).map(([k, v]) => (k === last ? [make(k), v] : [k, v]))
    for (const k of Object.keys(parent)) delete parent[k]
    Object.assign(parent, Object.fromEntries(entries))
  } else parent[last] = make(String(parent[last]))
  return copy as unknown as Shape
}

function toRequest(entry: FunctionEntry, route: RouteEntry, shape: Shape): Request {
  const { method, path } = route
  const url = path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(shape.params[name] ?? ''))
  const search = new URLSearchParams(shape.query).toString()
  const auth = entry.family === 'tracing' ? tracingAuth() : caller.bearer
  const headers: Record<string, string> = { ...auth, ...shape.headers }
  let body: FormData | string | undefined
  if (shape.form !== undefined) {
    const form = new FormData()
    form.set('project_id', shape.form.project_id ?? '')
    form.set('file', new Blob([shape.form.content ?? '']), shape.form.filename)
    body = form
  } else if (shape.body !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(shape.body)
  }
  return new Request(`http://loom.test${url}${search ? `?${search}` : ''}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  })
}

/** Whether a 4xx body has the family's error shape. */
function hasFamilyShape(family: FunctionEntry['family'], body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  if (family === 'inference') return typeof (b.error as { message?: unknown } | undefined)?.message === 'string'
  if (family === 'training') return 'detail' in b
  return typeof b.reason === 'string' || Array.isArray(b.detail)
}

/**
 * Every item of the table, by key, as a digest of its full content; with `keysOnly`, the keys alone (an empty digest),
 * which is all `restore` reads: an accepted request's items, megabytes of stretched strings, are then neither read back
 * nor hashed.
 */
async function snapshot(keysOnly = false): Promise<Map<string, string>> {
  const items = new Map<string, string>()
  let start: Record<string, unknown> | undefined
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: table(),
        ExclusiveStartKey: start,
        ConsistentRead: true,
        ...(keysOnly ? { ProjectionExpression: 'PK, SK' } : {}),
      }),
    )
    for (const item of page.Items ?? []) {
      const key = `${item.PK}\u0000${item.SK}`
      if (keysOnly) {
        items.set(key, '')
        continue
      }
      const text = JSON.stringify(item, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v))
      items.set(key, createHash('sha256').update(text).digest('hex'))
    }
    start = page.LastEvaluatedKey
  } while (start)
  return items
}

function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()])
  return [...keys].filter((k) => before.get(k) !== after.get(k)).map((k) => k.replace('\u0000', ' ').slice(0, 120))
}

/** Deletes every item that `base` does not hold, so each case starts from the same small table. */
async function restore(base: Map<string, string>, now?: Map<string, string>): Promise<void> {
  const extra = [...(now ?? (await snapshot())).keys()].filter((k) => !base.has(k))
  for (let i = 0; i < extra.length; i += 25) {
    const requests = extra.slice(i, i + 25).map((k) => {
      const [PK, SK] = k.split('\u0000')
      return { DeleteRequest: { Key: { PK, SK } } }
    })
    await db().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }))
  }
}

const tally: string[] = []
let base: Map<string, string>
beforeAll(async () => {
  base = await snapshot()
})
afterAll(() => {
  process.stdout.write(`\ndynamo-limits seed=${SEED} runs per field=${RUNS_PER_FIELD}\n${tally.join('\n')}\n`)
})

const WRITE_ROUTES: readonly RouteEntry[] = FUNCTIONS.filter((f) => f.access === 'write' && f.auth).flatMap(
  (f) => f.routes,
)
const nameOf = (route: RouteEntry) => `${route.method} ${route.path}`

describe('DynamoDB limits on every write endpoint', () => {
  it('has a case template for every write route of the manifest', () => {
    // Assess
    const covered = new Set<RouteEntry>(TEMPLATES.map((t) => declaredRoute(t.fn)))
    const alias = declaredRoute('tracing/create-file', 1)
    expect(WRITE_ROUTES.filter((r) => !covered.has(r) && r !== alias).map(nameOf)).toEqual([])
  })

  it.each(TEMPLATES.map((t) => [nameOf(declaredRoute(t.fn)), t] as const))(
    '%s answers 2xx or its family 4xx for long and huge strings, and a 4xx writes nothing',
    async (name, template) => {
      // Prepare
      const entry = entryOf(template.fn)
      const route = declaredRoute(template.fn)
      const { app } = await loadFunction(entry)
      const probe = template.shape(`${caller.entity}/probe`, {})
      const fields = leaves(probe)
      const statuses: number[] = []
      const failures: string[] = []
      // The request as templated is accepted, so a refusal below is the stretched string's doing.
      const plainProject = `${caller.entity}/lim${randomUUID().slice(0, 8)}`
      const plainVars = (await template.setup?.(plainProject)) ?? {}
      const plain = await app.fetch(toRequest(entry, route, template.shape(plainProject, plainVars)))
      expect(plain.status, await plain.text()).toBeLessThan(300)
      await settleAfterResponse()
      await flushUsage()
      await restore(base)

      // Act
      for (const [index, leaf] of fields.entries()) {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...SIZES),
            fc.constantFrom(...CHARS),
            fc.boolean(),
            async (size, char, append) => {
              const project = `${caller.entity}/lim${randomUUID().slice(0, 8)}`
              const vars = (await template.setup?.(project)) ?? {}
              // A header carries bytes, not text: a header value is stretched with ASCII.
              const unit = leaf.path[0] === 'headers' ? 'x' : char
              const filler = unit.repeat(Math.ceil(size / Buffer.byteLength(unit)))
              const shape = stretch(template.shape(project, vars), leaf, (old) => (append ? old + filler : filler))
              const before = await snapshot()
              const res = await app.fetch(toRequest(entry, route, shape))
              const text = await res.text()
              await settleAfterResponse()
              await flushUsage()
              // What a refusal left is compared item by item; after an acceptance only the keys to delete are read.
              const refused = res.status >= 400 && res.status < 500
              const after = await snapshot(!refused)
              await restore(base, after)
              const label = `${leaf.path.join('.')}${leaf.isKey ? ' (key)' : ''} ${append ? '+' : '='}${size}×${char}`
              statuses.push(res.status)
              if (res.status >= 500) failures.push(`${label}: ${res.status} ${text.slice(0, 200)}`)
              if (res.status >= 400 && res.status < 500) {
                let body: unknown
                try {
                  body = JSON.parse(text)
                } catch {
                  body = text
                }
                if (!hasFamilyShape(entry.family, body))
                  failures.push(`${label}: ${res.status} shape ${text.slice(0, 200)}`)
                const written = changes(before, after)
                if (written.length > 0) failures.push(`${label}: ${res.status} but wrote ${written.join(', ')}`)
              }
            },
          ),
          // One seed per field, derived from the printed one: fields get different sizes, each run the same.
          { seed: SEED + index, numRuns: RUNS_PER_FIELD },
        )
      }
      tally.push(
        `  ${name}: ${fields.length} fields, ${statuses.filter((s) => s < 300).length} stored, ${statuses.filter((s) => s >= 400).length} refused`,
      )

      // Assess
      expect(failures).toEqual([])
    },
    120_000,
  )
})
