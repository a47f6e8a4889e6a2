import { randomUUID } from 'node:crypto'
import { FUNCTIONS, type FunctionEntry, type FunctionId } from '#functions/manifest'
import type { RouteDeclaration } from '#shared/routes/declare'
import { loadFunction } from '../../scripts/local/app.js'
import type { TestCaller } from './auth.js'
import { endPart, startPart, writeCalls } from './calls.js'
import { newModel, trajectory } from './training.js'

/**
 * A representative valid request for every authenticated route that names a project, and the data they address (a
 * call, an object, a table, a file, a queue with an item, feedback, a preview model with logged metrics) built
 * through the real endpoints. Shared by the tenant-isolation matrix and the IAM policy proxy test.
 */

/** A request to one route: what a tenant would send, with its own credentials added by `callRoute`. */
export type Probe = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  body?: unknown
  form?: Record<string, string | Blob>
  headers?: Record<string, string>
}

/** A project's data, built through the real endpoints by its owner. */
export type Fixtures = {
  owner: TestCaller
  project: string
  callId: string
  objectId: string
  objectDigest: string
  /** An object whose `rows` is a ref to the table, as the SDKs publish a dataset. */
  datasetId: string
  datasetDigest: string
  tableDigest: string
  /** The digest of the table's one row. */
  rowDigest: string
  fileDigest: string
  queueId: string
  itemId: string
  feedbackId: string
  modelId: string
}

/** The manifest function that serves a probe's route. */
export function functionOf(probe: Probe): FunctionEntry {
  const entry = FUNCTIONS.find((f) =>
    f.routes.some(
      (r) =>
        r.method === probe.method && new RegExp(`^${r.path.replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(pathOnly(probe)),
    ),
  )
  if (!entry) throw new Error(`no function serves ${probe.method} ${probe.path}`)
  return entry
}

/** Sends a probe with `caller`'s credentials through the function that serves its route (or the one given). */
export async function callRoute(
  caller: TestCaller,
  probe: Probe,
  entry: FunctionEntry = functionOf(probe),
): Promise<{ status: number; text: string; json: unknown }> {
  const { app } = await loadFunction(entry)
  const headers: Record<string, string> = { ...caller.bearer, ...probe.headers }
  let body: FormData | string | undefined
  if (probe.form) {
    const form = new FormData()
    for (const [k, v] of Object.entries(probe.form)) form.append(k, v)
    body = form
  } else if (probe.body !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(probe.body)
  }
  const res = await app.fetch(
    new Request(`http://loom.test${probe.path}`, { method: probe.method, headers, ...(body ? { body } : {}) }),
  )
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, text, json }
}

function pathOnly(probe: Probe): string {
  return probe.path.split('?')[0] as string
}

export async function ok(caller: TestCaller, probe: Probe): Promise<Record<string, unknown>> {
  const res = await callRoute(caller, probe)
  if (res.status !== 200) throw new Error(`${probe.method} ${probe.path} → ${res.status} ${res.text.slice(0, 300)}`)
  return res.json as Record<string, unknown>
}

/** Builds a call, an object, a table, a file, a queue with an item, feedback and a preview model in B's project. */
export async function buildFixtures(b: TestCaller): Promise<Fixtures> {
  const project = `${b.entity}/secret-${randomUUID().slice(0, 6)}`
  const callId = randomUUID()
  await writeCalls(b, [
    {
      start: startPart(project, { id: callId, inputs: { prompt: 'SECRET-INPUT' } }),
      end: endPart(project, callId, { output: 'SECRET-OUTPUT' }),
    },
  ])
  const objectId = 'secret-obj'
  const obj = await ok(b, {
    method: 'POST',
    path: '/obj/create',
    body: { obj: { project_id: project, object_id: objectId, val: { secret: 'SECRET-OBJ' } } },
  })
  const tbl = await ok(b, {
    method: 'POST',
    path: '/table/create',
    body: { table: { project_id: project, rows: [{ secret: 'SECRET-ROW' }] } },
  })
  const datasetId = 'secret-dataset'
  const dataset = await ok(b, {
    method: 'POST',
    path: '/obj/create',
    body: {
      obj: { project_id: project, object_id: datasetId, val: { rows: `weave:///${project}/table/${tbl.digest}` } },
    },
  })
  const file = await ok(b, {
    method: 'POST',
    path: '/file/create',
    form: { project_id: project, file: new Blob(['SECRET-FILE']) },
  })
  const queue = await ok(b, {
    method: 'POST',
    path: '/annotation_queues',
    body: { project_id: project, name: 'secret-queue', scorer_refs: [] },
  })
  const queueId = queue.id as string
  await ok(b, {
    method: 'POST',
    path: `/annotation_queues/${queueId}/items`,
    body: { project_id: project, call_ids: [callId], display_fields: ['inputs.prompt'] },
  })
  const items = await ok(b, {
    method: 'POST',
    path: `/annotation_queues/${queueId}/items/query`,
    body: { project_id: project },
  })
  const itemId = (items.items as { id: string }[])[0]?.id as string
  const fb = await ok(b, {
    method: 'POST',
    path: '/feedback/create',
    body: {
      project_id: project,
      weave_ref: `weave:///${project}/call/${callId}`,
      feedback_type: 'note',
      payload: { note: 'SECRET-NOTE' },
    },
  })
  const model = await newModel(b, project.split('/')[1])
  await ok(b, {
    method: 'POST',
    path: `/v1/preview/models/${model.id}/log`,
    body: { trajectory_groups: [{ trajectories: [trajectory(1, { secret_metric: 1 })] }], split: 'train', step: 1 },
  })
  return {
    owner: b,
    project,
    callId,
    objectId,
    objectDigest: obj.digest as string,
    datasetId,
    datasetDigest: dataset.digest as string,
    tableDigest: tbl.digest as string,
    rowDigest: (tbl.row_digests as string[])[0] as string,
    fileDigest: file.digest as string,
    queueId,
    itemId,
    feedbackId: fb.id as string,
    modelId: model.id,
  }
}

/** A probe of one declared route (`variant` tells apart several probes of the same route). */
export type RouteProbe = { route: RouteDeclaration; probe: Probe; variant?: string }

/** How a probe fills in its route: path parameters, query string, body, multipart form and headers. */
type ProbeSpec = Omit<Probe, 'method' | 'path'> & { params?: Record<string, string>; query?: Record<string, string> }

/** The route declared by function `id` (its `index`th, for functions serving aliases). */
export function declaredRoute(id: FunctionId, index = 0): RouteDeclaration {
  const route: RouteDeclaration | undefined = FUNCTIONS.find((f) => f.id === id)?.routes[index]
  if (route === undefined) throw new Error(`${id} declares no route ${index}`)
  return route
}

/** A probe of function `id`'s declared route: its method, and its path with `params` filled in and `query` added. */
export function probe(id: FunctionId, spec: ProbeSpec = {}, index = 0): RouteProbe {
  const route = declaredRoute(id, index)
  const { params, query, ...rest } = spec
  const path = route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = params?.[name]
    if (value === undefined) throw new Error(`no ${name} for ${route.method} ${route.path}`)
    return encodeURIComponent(value)
  })
  const search = query === undefined ? '' : `?${new URLSearchParams(query)}`
  return { route, probe: { method: route.method, path: `${path}${search}`, ...rest } }
}

/** `<METHOD> <path>` of a probe's route, with its variant: for messages. */
export function probeName({ route, variant }: RouteProbe): string {
  return `${route.method} ${route.path}${variant === undefined ? '' : ` (${variant})`}`
}

/** Every route that names a project, with a request B may make against its own project (destructive ones last). */
export function projectProbes(f: Fixtures, entity: string): RouteProbe[] {
  const p = f.project
  const proj = p.split('/')[1] as string
  const queue = { queue_id: f.queueId }
  const version = { object_id: f.objectId, digest: f.objectDigest }
  const window = { project_id: p, start: new Date(Date.now() - 86_400_000).toISOString() }
  return [
    probe('tracing/start-call', { body: { start: startPart(p) } }),
    probe('tracing/end-call', { body: { end: endPart(p, randomUUID()) } }),
    probe('tracing/upsert-call-batch', { body: { batch: [{ mode: 'start', req: { start: startPart(p) } }] } }),
    probe('tracing/read-call', { body: { project_id: p, id: f.callId } }),
    probe('tracing/update-call', { body: { project_id: p, call_id: f.callId, display_name: 'renamed' } }),
    probe('tracing/stream-query-calls', { body: { project_id: p } }),
    // One OTLP/JSON span, stored as a call in the project of the `project_id` header.
    probe('tracing/export-otel-traces', {
      headers: { project_id: p },
      body: {
        resourceSpans: [
          {
            resource: { attributes: [] },
            scopeSpans: [
              {
                scope: { name: 'route-probes' },
                spans: [
                  {
                    traceId: '5b8efff798038103d269b633813fc60c',
                    spanId: 'eee19b7ec3c1b174',
                    name: 'probe',
                    kind: 1,
                    startTimeUnixNano: '1700000000000000000',
                    endTimeUnixNano: '1700000001000000000',
                  },
                ],
              },
            ],
          },
        ],
      },
    }),
    probe('tracing/query-call-stats', { body: { project_id: p } }),
    probe('tracing/trace-usage', { body: { project_id: p } }),
    probe('tracing/calls-usage', { body: { project_id: p, call_ids: [f.callId] } }),
    probe('tracing/create-cost', {
      body: { project_id: p, costs: { 'gpt-x': { prompt_token_cost: 1, completion_token_cost: 2 } } },
    }),
    probe('tracing/query-cost', { body: { project_id: p } }),
    probe('tracing/create-obj', { body: { obj: { project_id: p, object_id: 'other', val: 1 } } }),
    probe('tracing/read-obj', { body: { project_id: p, object_id: f.objectId, digest: f.objectDigest } }),
    probe('tracing/query-objs', { body: { project_id: p } }),
    // An object, and a row of the table reached through the dataset object's `rows` ref.
    probe('tracing/read-refs-batch', {
      body: {
        refs: [
          `weave:///${p}/object/${f.objectId}:${f.objectDigest}`,
          `weave:///${p}/object/${f.datasetId}:${f.datasetDigest}/attr/rows/id/${f.rowDigest}`,
        ],
      },
    }),
    probe('tracing/add-obj-tags', { params: version, body: { project_id: p, tags: ['t1'] } }),
    probe('tracing/remove-obj-tags', { params: version, body: { project_id: p, tags: ['t1'] } }),
    probe('tracing/set-obj-aliases', {
      params: { object_id: f.objectId },
      body: { project_id: p, digest: f.objectDigest, aliases: ['prod'] },
    }),
    probe('tracing/remove-obj-aliases', {
      params: { object_id: f.objectId },
      body: { project_id: p, aliases: ['prod'] },
    }),
    probe('tracing/list-tags', { query: { project_id: p } }),
    probe('tracing/list-aliases', { query: { project_id: p } }),
    probe('tracing/create-feedback', {
      body: {
        project_id: p,
        weave_ref: `weave:///${p}/call/${f.callId}`,
        feedback_type: 'note',
        payload: { note: 'x' },
      },
    }),
    probe('tracing/create-feedback-batch', {
      body: {
        batch: [
          { project_id: p, weave_ref: `weave:///${p}/call/${f.callId}`, feedback_type: 'note', payload: { note: 'x' } },
        ],
      },
    }),
    probe('tracing/query-feedback', { body: { project_id: p } }),
    probe('tracing/replace-feedback', {
      body: {
        project_id: p,
        feedback_id: f.feedbackId,
        weave_ref: `weave:///${p}/call/${f.callId}`,
        feedback_type: 'note',
        payload: { note: 'replaced' },
      },
    }),
    probe('tracing/get-feedback-stats', { body: window }),
    probe('tracing/get-feedback-payload-schema', { body: window }),
    probe('tracing/create-annotation-queue', { body: { project_id: p, name: 'q2', scorer_refs: [] } }),
    probe('tracing/query-annotation-queues', { body: { project_id: p } }),
    probe('tracing/read-annotation-queue', { params: queue, query: { project_id: p } }),
    probe('tracing/update-annotation-queue', { params: queue, body: { project_id: p, name: 'renamed' } }),
    probe('tracing/add-annotation-queue-items', {
      params: queue,
      body: { project_id: p, call_ids: [f.callId], display_fields: ['inputs.prompt'] },
    }),
    probe('tracing/query-annotation-queue-items', { params: queue, body: { project_id: p } }),
    probe('tracing/get-annotation-queues-stats', { body: { project_id: p, queue_ids: [f.queueId] } }),
    probe('tracing/update-annotation-queue-item-progress', {
      params: { ...queue, item_id: f.itemId },
      body: { project_id: p, annotation_state: 'in_progress' },
    }),
    probe('tracing/create-table', { body: { table: { project_id: p, rows: [{ a: 1 }] } } }),
    probe('tracing/query-table', { body: { project_id: p, digest: f.tableDigest } }),
    probe('tracing/update-table', {
      body: { project_id: p, base_digest: f.tableDigest, updates: [{ append: { row: { a: 1 } } }] },
    }),
    probe('tracing/create-table-from-digests', { body: { project_id: p, row_digests: [f.rowDigest, f.rowDigest] } }),
    probe('tracing/query-table-stats', { body: { project_id: p, digest: f.tableDigest } }),
    probe('tracing/query-table-stats-batch', {
      body: { project_id: p, digests: [f.tableDigest], include_storage_size: true },
    }),
    probe('tracing/create-file', { form: { project_id: p, file: new Blob(['x']) } }),
    probe('tracing/create-file', { form: { project_id: p, file: new Blob(['x']) } }, 1),
    probe('tracing/read-file-content', { body: { project_id: p, digest: f.fileDigest } }),
    probe('tracing/read-file-content', { body: { project_id: p, digest: f.fileDigest } }, 1),
    probe('training/create-preview-model', {
      body: { entity, project: proj, name: `m-${randomUUID().slice(0, 8)}`, base_model: 'Qwen/Qwen2.5-7B-Instruct' },
    }),
    probe('training/list-preview-models', { query: { entity, project: proj } }),
    probe('inference/list-models', { headers: { 'openai-project': p } }),
    probe('inference/get-usage', { headers: { 'openai-project': p } }),
    probe('inference/create-chat-completion', {
      headers: { 'compat-project': p },
      body: { model: 'some-model', messages: [{ role: 'user', content: 'hi' }] },
    }),
    // Destructive ones last, so B's own requests above still find the data.
    probe('tracing/purge-feedback', {
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: f.feedbackId }] } } },
    }),
    probe('tracing/purge-cost', {
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'none' }] } } },
    }),
    probe('tracing/delete-obj', { body: { project_id: p, object_id: 'other' } }),
    probe('tracing/delete-calls', { body: { project_id: p, call_ids: [randomUUID()] } }),
    probe('tracing/delete-annotation-queue', { params: queue, query: { project_id: p } }),
  ]
}
