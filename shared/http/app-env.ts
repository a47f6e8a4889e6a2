import type { LambdaContext, LambdaEvent } from 'hono/aws-lambda'
import type { Principal } from '#shared/schemas/api-key'

/** The route families; each answers errors in its own contract's shape. */
export type Family = 'inference' | 'training' | 'tracing' | 'meta'

/** The `<entity>/<project>` a request is attributed to. */
export type ProjectRef = { entity: string; project: string; id: string }

/** Hono environment shared by every Loom app (Lambda bindings when deployed, empty locally). */
export type AppEnv = {
  Bindings: {
    event?: LambdaEvent
    lambdaContext?: LambdaContext
    /** The Lambda context under `streamHandle` (response streaming). */
    context?: LambdaContext
    requestContext?: { authorizer?: Record<string, unknown> } & Record<string, unknown>
  }
  Variables: {
    requestId: string
    family: Family
    /** Set by the family's auth middleware on every authenticated route. */
    auth: Principal
    /** Inference only: the project usage is attributed to. */
    project: ProjectRef
  }
}
