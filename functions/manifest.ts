/**
 * Every deployable function: its folder under `functions/`, the routes it serves, what it may do to the table and
 * how it is invoked. Plain data with no imports, read by the local server (to mount each function's `app`) and by the
 * CDK app (one Lambda per entry). `test/functions/manifest.test.ts` checks each entry against its handler.
 */

/** One route served by a function. */
export type RouteEntry = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string }

/** One Lambda function. */
export type FunctionEntry = {
  /** `<family>/<verb-noun>`: the folder holding `handler.ts`. */
  id: string
  family: 'meta' | 'inference' | 'training' | 'tracing'
  routes: RouteEntry[]
  /** Table access the function is granted. */
  access: 'none' | 'read' | 'write'
  /** Whether API Gateway must stream the response (served by `streamHandle`). */
  stream?: boolean
  /** Whether the route sits behind the authorizer (false only for public routes). */
  auth: boolean
}

/** The functions Loom deploys, grouped by family. */
export const FUNCTIONS: readonly FunctionEntry[] = [
  { id: 'meta/get-health', family: 'meta', routes: [{ method: 'GET', path: '/health' }], access: 'none', auth: false },
  {
    id: 'meta/get-openapi',
    family: 'meta',
    routes: [{ method: 'GET', path: '/openapi.json' }],
    access: 'none',
    auth: false,
  },
  {
    id: 'training/create-preview-model',
    family: 'training',
    routes: [{ method: 'POST', path: '/v1/preview/models' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'training/list-preview-models',
    family: 'training',
    routes: [{ method: 'GET', path: '/v1/preview/models' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'training/delete-preview-model',
    family: 'training',
    routes: [{ method: 'DELETE', path: '/v1/preview/models/:model_id' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'training/log-trajectories',
    family: 'training',
    routes: [{ method: 'POST', path: '/v1/preview/models/:model_id/log' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'training/get-model-metrics',
    family: 'training',
    routes: [{ method: 'GET', path: '/v1/preview/models/:model_id/metrics' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'inference/create-chat-completion',
    family: 'inference',
    // The app also serves `/v1/chat/completions/`; API Gateway maps both spellings to this one resource.
    routes: [{ method: 'POST', path: '/v1/chat/completions' }],
    access: 'write',
    stream: true,
    auth: true,
  },
  {
    id: 'inference/list-models',
    family: 'inference',
    routes: [{ method: 'GET', path: '/v1/models' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'inference/get-usage',
    family: 'inference',
    routes: [{ method: 'GET', path: '/v1/usage' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/start-call',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/call/start' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/end-call',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/call/end' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/upsert-call-batch',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/call/upsert_batch' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/export-otel-traces',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/otel/v1/traces' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/read-call',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/call/read' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/update-call',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/call/update' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/delete-calls',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/calls/delete' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/stream-query-calls',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/calls/stream_query' }],
    access: 'read',
    stream: true,
    auth: true,
  },
  {
    id: 'tracing/query-call-stats',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/calls/query_stats' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/trace-usage',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/trace/usage' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/calls-usage',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/calls/usage' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/create-cost',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/cost/create' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/query-cost',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/cost/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/purge-cost',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/cost/purge' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'meta/get-server-info',
    family: 'meta',
    routes: [{ method: 'GET', path: '/server_info' }],
    access: 'none',
    auth: false,
  },
  // Tracing: objects, tags and aliases.
  {
    id: 'tracing/create-obj',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/obj/create' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/read-obj',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/obj/read' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/query-objs',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/objs/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/delete-obj',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/obj/delete' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/add-obj-tags',
    family: 'tracing',
    routes: [{ method: 'PUT', path: '/objs/:object_id/versions/:digest/tags' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/remove-obj-tags',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/objs/:object_id/versions/:digest/tags/remove' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/set-obj-aliases',
    family: 'tracing',
    routes: [{ method: 'PUT', path: '/objs/:object_id/aliases' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/remove-obj-aliases',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/objs/:object_id/aliases/remove' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/list-tags',
    family: 'tracing',
    routes: [{ method: 'GET', path: '/tags' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/list-aliases',
    family: 'tracing',
    routes: [{ method: 'GET', path: '/aliases' }],
    access: 'read',
    auth: true,
  },
  // Tracing: feedback.
  {
    id: 'tracing/create-feedback',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/create' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/create-feedback-batch',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/batch/create' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/query-feedback',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/purge-feedback',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/purge' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/replace-feedback',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/replace' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/get-feedback-stats',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/stats' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/get-feedback-payload-schema',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/feedback/payload_schema' }],
    access: 'read',
    auth: true,
  },
  // Tracing: annotation queues.
  {
    id: 'tracing/create-annotation-queue',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/query-annotation-queues',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/read-annotation-queue',
    family: 'tracing',
    routes: [{ method: 'GET', path: '/annotation_queues/:queue_id' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/update-annotation-queue',
    family: 'tracing',
    routes: [{ method: 'PUT', path: '/annotation_queues/:queue_id' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/delete-annotation-queue',
    family: 'tracing',
    routes: [{ method: 'DELETE', path: '/annotation_queues/:queue_id' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/add-annotation-queue-items',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues/:queue_id/items' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/query-annotation-queue-items',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues/:queue_id/items/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/get-annotation-queues-stats',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues/stats' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/update-annotation-queue-item-progress',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/annotation_queues/:queue_id/items/:item_id/progress' }],
    access: 'write',
    auth: true,
  },
  // Tracing: tables and files.
  {
    id: 'tracing/create-table',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/table/create' }],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/query-table',
    family: 'tracing',
    routes: [{ method: 'POST', path: '/table/query' }],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/create-file',
    family: 'tracing',
    routes: [
      { method: 'POST', path: '/file/create' },
      { method: 'POST', path: '/files/create' },
    ],
    access: 'write',
    auth: true,
  },
  {
    id: 'tracing/read-file-content',
    family: 'tracing',
    routes: [
      { method: 'POST', path: '/file/content' },
      { method: 'POST', path: '/files/content' },
    ],
    access: 'read',
    auth: true,
  },
  {
    id: 'tracing/list-projects',
    family: 'tracing',
    routes: [{ method: 'GET', path: '/projects' }],
    access: 'read',
    auth: true,
  },
  {
    // The Loom Console: public page and assets; its API calls carry the user's key. `GET /` redirects to it.
    id: 'meta/get-console',
    family: 'meta',
    routes: [
      { method: 'GET', path: '/' },
      { method: 'GET', path: '/console' },
      { method: 'GET', path: '/console/:file' },
    ],
    access: 'none',
    auth: false,
  },
]
