// Streaming handlers call `awslambda.streamifyResponse` when their module loads; outside Lambda it is missing (the
// AWS SDK may already have created `globalThis.awslambda` for its own use, so only the missing members are added).
// Import this module before such a handler (STYLE §11's shim).
type LambdaGlobal = { streamifyResponse?: unknown; HttpResponseStream?: unknown }
const g = globalThis as { awslambda?: LambdaGlobal }
g.awslambda ??= {}
g.awslambda.streamifyResponse ??= (f: unknown) => f
g.awslambda.HttpResponseStream ??= { from: (s: unknown) => s }
