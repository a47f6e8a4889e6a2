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
]
