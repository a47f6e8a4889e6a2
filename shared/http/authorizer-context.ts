import { safeParse } from 'zod/mini'
import { type Principal, PrincipalSchema } from '#shared/schemas/api-key'

/**
 * The principal as the REQUEST authorizer passes it to API Gateway: a context map of strings (API Gateway allows
 * only primitives), with `entities` JSON-encoded.
 */
export function principalToAuthorizerContext(principal: Principal): Record<string, string> {
  return {
    userId: principal.userId,
    keyId: principal.keyId,
    entity: principal.entity,
    entities: JSON.stringify(principal.entities),
  }
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
  try {
    entities = JSON.parse(context.entities)
  } catch {
    return undefined
  }
  const parsed = safeParse(PrincipalSchema, { ...context, entities })
  return parsed.success ? parsed.data : undefined
}
