import { randomUUID } from 'node:crypto'
import { FUNCTIONS, type FunctionEntry } from '#functions/manifest'
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
  tableDigest: string
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
    tableDigest: tbl.digest as string,
    fileDigest: file.digest as string,
    queueId,
    itemId,
    feedbackId: fb.id as string,
    modelId: model.id,
  }
}

/** Every route that names a project, with a request B may make against its own project. */
export function projectProbes(f: Fixtures, entity: string): Record<string, Probe> {
  const p = f.project
  const proj = p.split('/')[1] as string
  const q = `/annotation_queues/${f.queueId}`
  const o = `/objs/${f.objectId}`
  const window = { project_id: p, start: new Date(Date.now() - 86_400_000).toISOString() }
  return {
    'POST /call/start': { method: 'POST', path: '/call/start', body: { start: startPart(p) } },
    'POST /call/end': { method: 'POST', path: '/call/end', body: { end: endPart(p, randomUUID()) } },
    'POST /call/upsert_batch': {
      method: 'POST',
      path: '/call/upsert_batch',
      body: { batch: [{ mode: 'start', req: { start: startPart(p) } }] },
    },
    'POST /call/read': { method: 'POST', path: '/call/read', body: { project_id: p, id: f.callId } },
    'POST /call/update': {
      method: 'POST',
      path: '/call/update',
      body: { project_id: p, call_id: f.callId, display_name: 'renamed' },
    },
    'POST /calls/stream_query': { method: 'POST', path: '/calls/stream_query', body: { project_id: p } },
    // One OTLP/JSON span, stored as a call in the project of the `project_id` header.
    'POST /otel/v1/traces': {
      method: 'POST',
      path: '/otel/v1/traces',
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
    },
    'POST /calls/query_stats': { method: 'POST', path: '/calls/query_stats', body: { project_id: p } },
    'POST /trace/usage': { method: 'POST', path: '/trace/usage', body: { project_id: p } },
    'POST /calls/usage': { method: 'POST', path: '/calls/usage', body: { project_id: p, call_ids: [f.callId] } },
    'POST /cost/create': {
      method: 'POST',
      path: '/cost/create',
      body: { project_id: p, costs: { 'gpt-x': { prompt_token_cost: 1, completion_token_cost: 2 } } },
    },
    'POST /cost/query': { method: 'POST', path: '/cost/query', body: { project_id: p } },
    'POST /obj/create': {
      method: 'POST',
      path: '/obj/create',
      body: { obj: { project_id: p, object_id: 'other', val: 1 } },
    },
    'POST /obj/read': {
      method: 'POST',
      path: '/obj/read',
      body: { project_id: p, object_id: f.objectId, digest: f.objectDigest },
    },
    'POST /objs/query': { method: 'POST', path: '/objs/query', body: { project_id: p } },
    'PUT /objs/:object_id/versions/:digest/tags': {
      method: 'PUT',
      path: `${o}/versions/${f.objectDigest}/tags`,
      body: { project_id: p, tags: ['t1'] },
    },
    'POST /objs/:object_id/versions/:digest/tags/remove': {
      method: 'POST',
      path: `${o}/versions/${f.objectDigest}/tags/remove`,
      body: { project_id: p, tags: ['t1'] },
    },
    'PUT /objs/:object_id/aliases': {
      method: 'PUT',
      path: `${o}/aliases`,
      body: { project_id: p, digest: f.objectDigest, aliases: ['prod'] },
    },
    'POST /objs/:object_id/aliases/remove': {
      method: 'POST',
      path: `${o}/aliases/remove`,
      body: { project_id: p, aliases: ['prod'] },
    },
    'GET /tags': { method: 'GET', path: `/tags?project_id=${encodeURIComponent(p)}` },
    'GET /aliases': { method: 'GET', path: `/aliases?project_id=${encodeURIComponent(p)}` },
    'POST /feedback/create': {
      method: 'POST',
      path: '/feedback/create',
      body: {
        project_id: p,
        weave_ref: `weave:///${p}/call/${f.callId}`,
        feedback_type: 'note',
        payload: { note: 'x' },
      },
    },
    'POST /feedback/batch/create': {
      method: 'POST',
      path: '/feedback/batch/create',
      body: {
        batch: [
          { project_id: p, weave_ref: `weave:///${p}/call/${f.callId}`, feedback_type: 'note', payload: { note: 'x' } },
        ],
      },
    },
    'POST /feedback/query': { method: 'POST', path: '/feedback/query', body: { project_id: p } },
    'POST /feedback/replace': {
      method: 'POST',
      path: '/feedback/replace',
      body: {
        project_id: p,
        feedback_id: f.feedbackId,
        weave_ref: `weave:///${p}/call/${f.callId}`,
        feedback_type: 'note',
        payload: { note: 'replaced' },
      },
    },
    'POST /feedback/stats': { method: 'POST', path: '/feedback/stats', body: window },
    'POST /feedback/payload_schema': { method: 'POST', path: '/feedback/payload_schema', body: window },
    'POST /annotation_queues': {
      method: 'POST',
      path: '/annotation_queues',
      body: { project_id: p, name: 'q2', scorer_refs: [] },
    },
    'POST /annotation_queues/query': { method: 'POST', path: '/annotation_queues/query', body: { project_id: p } },
    'GET /annotation_queues/:queue_id': { method: 'GET', path: `${q}?project_id=${encodeURIComponent(p)}` },
    'PUT /annotation_queues/:queue_id': { method: 'PUT', path: q, body: { project_id: p, name: 'renamed' } },
    'POST /annotation_queues/:queue_id/items': {
      method: 'POST',
      path: `${q}/items`,
      body: { project_id: p, call_ids: [f.callId], display_fields: ['inputs.prompt'] },
    },
    'POST /annotation_queues/:queue_id/items/query': {
      method: 'POST',
      path: `${q}/items/query`,
      body: { project_id: p },
    },
    'POST /annotation_queues/stats': {
      method: 'POST',
      path: '/annotation_queues/stats',
      body: { project_id: p, queue_ids: [f.queueId] },
    },
    'POST /annotation_queues/:queue_id/items/:item_id/progress': {
      method: 'POST',
      path: `${q}/items/${f.itemId}/progress`,
      body: { project_id: p, annotation_state: 'in_progress' },
    },
    'POST /table/create': {
      method: 'POST',
      path: '/table/create',
      body: { table: { project_id: p, rows: [{ a: 1 }] } },
    },
    'POST /table/query': { method: 'POST', path: '/table/query', body: { project_id: p, digest: f.tableDigest } },
    'POST /file/create': { method: 'POST', path: '/file/create', form: { project_id: p, file: new Blob(['x']) } },
    'POST /files/create': { method: 'POST', path: '/files/create', form: { project_id: p, file: new Blob(['x']) } },
    'POST /file/content': { method: 'POST', path: '/file/content', body: { project_id: p, digest: f.fileDigest } },
    'POST /files/content': { method: 'POST', path: '/files/content', body: { project_id: p, digest: f.fileDigest } },
    'POST /v1/preview/models': {
      method: 'POST',
      path: '/v1/preview/models',
      body: { entity, project: proj, name: `m-${randomUUID().slice(0, 8)}`, base_model: 'Qwen/Qwen2.5-7B-Instruct' },
    },
    'GET /v1/preview/models': { method: 'GET', path: `/v1/preview/models?entity=${entity}&project=${proj}` },
    'GET /v1/models': { method: 'GET', path: '/v1/models', headers: { 'openai-project': p } },
    'GET /v1/usage': { method: 'GET', path: '/v1/usage', headers: { 'openai-project': p } },
    'POST /v1/chat/completions': {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'compat-project': p },
      body: { model: 'some-model', messages: [{ role: 'user', content: 'hi' }] },
    },
    // Destructive ones last, so B's own requests above still find the data.
    'POST /feedback/purge': {
      method: 'POST',
      path: '/feedback/purge',
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: f.feedbackId }] } } },
    },
    'POST /cost/purge': {
      method: 'POST',
      path: '/cost/purge',
      body: { project_id: p, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'none' }] } } },
    },
    'POST /obj/delete': { method: 'POST', path: '/obj/delete', body: { project_id: p, object_id: 'other' } },
    'POST /calls/delete': { method: 'POST', path: '/calls/delete', body: { project_id: p, call_ids: [randomUUID()] } },
    'DELETE /annotation_queues/:queue_id': { method: 'DELETE', path: `${q}?project_id=${encodeURIComponent(p)}` },
  }
}
