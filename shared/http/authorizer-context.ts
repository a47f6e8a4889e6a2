import { safeParse } from 'zod/mini'
import { type Principal, PrincipalSchema } from '#shared/schemas/api-key'

/**
 * The principal as the REQUEST authorizer passes it to API Gateway: a context map of strings (API Gateway allows
 * only primitives), with `entities` and the key's `limits` (when set) JSON-encoded.
 */
export function principalToAuthorizerContext(principal: Principal): Record<string, string> {
  const context: Record<string, string> = {
    userId: principal.userId,
    keyId: principal.keyId,
    entity: principal.entity,
    entities: JSON.stringify(principal.entities),
  }
  if (principal.limits !== undefined) context.limits = JSON.stringify(principal.limits)
  return context
}

/** Reads the principal back from an authorizer context; undefined when the request did not pass our authorizer. */
export function principalFromAuthorizer(context: Record<string, unknown> | null | undefined): Principal | undefined {
  if (
    context === undefined ||
    context === null ||
    typeof context.userId !== 'string' ||
    typeof context.entities !== 'string'
  ) {
    return undefined
  }
  let entities: unknown
  let limits: unknown
  try {
    entities = JSON.parse(context.entities)
    limits = typeof context.limits === 'string' ? JSON.parse(context.limits) : undefined
  } catch {
    return undefined
  }
  const parsed = safeParse(PrincipalSchema, { ...context, entities, ...(limits === undefined ? {} : { limits }) })
  return parsed.success ? parsed.data : undefined
}
