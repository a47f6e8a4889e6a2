import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda'
import { type AuthScheme, assertProjectAccess, authenticate } from '#shared/auth/authenticate'
import { HttpError } from '#shared/errors/http-error'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'

function header(event: APIGatewayRequestAuthorizerEvent, name: string): string | undefined {
  const headers = event.headers ?? {}
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : (headers[key] ?? undefined)
}

/** The scheme a path's family accepts: Bearer under `/v1`, Basic `api:<key>` or Bearer for tracing. */
export function schemeForPath(path: string): AuthScheme {
  return path === '/v1' || path.startsWith('/v1/') ? 'bearer' : 'basic-or-bearer'
}

// The policy covers the whole API (`<api>/<stage>/*`) because API Gateway caches it per identity source
// (Authorization + project headers) and reuses it across routes; each function still checks the scheme and the
// body's project itself.
function wholeApi(methodArn: string): string {
  const [arnPrefix, stage] = methodArn.split('/')
  return `${arnPrefix}/${stage}/*`
}

/**
 * The API Gateway REQUEST authorizer's decision: Allow with the principal in the context, or the string
 * `Unauthorized` (API Gateway's 401) / a Deny policy (403) as API Gateway requires.
 */
export async function authorizeRequest(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const path = event.path ?? ''
  try {
    const principal = await authenticate(header(event, 'authorization'), schemeForPath(path))
    const project = header(event, 'compat-project') ?? header(event, 'openai-project')
    if (project !== undefined && project.trim() !== '') assertProjectAccess(principal, project.trim())
    return {
      principalId: principal.userId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
      },
      context: principalToAuthorizerContext(principal),
    }
  } catch (error) {
    if (error instanceof HttpError && error.statusCode === 403) {
      return {
        principalId: 'forbidden',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: event.methodArn }],
        },
      }
    }
    if (error instanceof HttpError && error.statusCode === 401) throw new Error('Unauthorized')
    throw error
  }
}
