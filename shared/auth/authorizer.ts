import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda'
import { type AuthScheme, authenticate } from '#shared/auth/authenticate'
import { HttpError } from '#shared/errors/http-error'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { logger } from '#shared/logger'

function header(event: APIGatewayRequestAuthorizerEvent, name: string): string | undefined {
  const headers = event.headers ?? {}
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : (headers[key] ?? undefined)
}

/** The scheme a path's family accepts: Bearer under `/v1`, Basic `api:<key>` or Bearer for tracing. */
export function schemeForPath(path: string): AuthScheme {
  return path === '/v1' || path.startsWith('/v1/') ? 'bearer' : 'basic-or-bearer'
}

// The policy covers the whole API (`<api>/<stage>/*`) because API Gateway caches it per identity source (the
// `Authorization` header only: infra/api-stack.ts) and reuses it across routes; each function still checks the scheme
// and the request's project (body or project headers) itself.
function wholeApi(methodArn: string): string {
  const [arnPrefix, stage] = methodArn.split('/')
  return `${arnPrefix}/${stage}/*`
}

function allow(event: APIGatewayRequestAuthorizerEvent, principalId: string): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
    },
  }
}

/**
 * The API Gateway REQUEST authorizer's decision. A valid key: Allow with the principal in the context, so functions
 * skip the look-up. Anything else (unknown or revoked key, a scheme the path's family refuses, a failed look-up): Allow
 * without a principal, so the function authenticates the request itself and answers in its family's shape (401 with
 * the contract's message, 503 with `Retry-After`). API Gateway's own 401/403/500 have one fixed body for the whole API,
 * which matches no family's error shape, and a cached Deny would be reused for every route. Project headers are checked
 * by the functions (the decision is cached per `Authorization` value only).
 */
export async function authorizeRequest(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  try {
    const principal = await authenticate(header(event, 'authorization'), schemeForPath(event.path ?? ''))
    return { ...allow(event, principal.userId), context: principalToAuthorizerContext(principal) }
  } catch (error) {
    if (!(error instanceof HttpError)) logger.warn('authorizer look-up failed; the function will retry it', { error })
    return allow(event, 'unauthenticated')
  }
}
