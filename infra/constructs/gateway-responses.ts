import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway'

/** API Gateway's own error body: one for the whole API, so it carries each family's error key at once. */
export function gatewayBody(message: string, type: string, code: number): string {
  return JSON.stringify({ error: { message, type, param: null, code }, reason: message, detail: message })
}

// The same body with API Gateway's own message (`$context.error.messageString`, a JSON string literal already), for
// the catch-all responses whose cause varies.
function gatewayContextBody(type: string, code: number): string {
  const message = '$context.error.messageString'
  return `{"error":{"message":${message},"type":"${type}","param":null,"code":${code}},"reason":${message},"detail":${message}}`
}

/**
 * The few answers API Gateway gives itself: a request without `Authorization` never reaches the authorizer (401), an
 * authorizer that crashed or timed out (500 by default), stage throttling (429). A gateway response has one body for
 * the whole API, so it carries each family's error key at once: `error` (OpenAI / vLLM), `reason` (Weave) and
 * `detail` (training), each client reading its own. Every other error comes from the functions, in their family's
 * shape (the authorizer never denies; see shared/auth/authorizer.ts).
 */
export function addGatewayResponses(api: RestApi): void {
  const body = gatewayBody
  const answers = [
    {
      id: 'Unauthorized',
      type: ResponseType.UNAUTHORIZED,
      status: 401,
      body: body('Authentication failed', 'AuthenticationError', 401),
    },
    {
      id: 'AuthorizerFailure',
      type: ResponseType.AUTHORIZER_FAILURE,
      status: 503,
      body: body('The service is temporarily unavailable, please try again later', 'ServiceUnavailableError', 503),
      retryAfter: true,
    },
    {
      // API Gateway's answer for a path or method no resource serves is a 403 "Missing Authentication Token" in its
      // own shape; the functions answer an unknown route 404 in their family's shape, and so does the gateway.
      id: 'NoRoute',
      type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
      status: 404,
      body: body('No route for this method and path', 'Not Found', 404),
    },
    {
      id: 'Throttled',
      type: ResponseType.THROTTLED,
      status: 429,
      body: body('Rate limit reached for requests', 'RateLimitError', 429),
      retryAfter: true,
    },
    {
      // A body past API Gateway's 10 MB (smaller ones past Lambda's 6 MB invoke limit end in DEFAULT_5XX).
      id: 'RequestTooLarge',
      type: ResponseType.REQUEST_TOO_LARGE,
      status: 413,
      body: body('Request too large', 'PayloadTooLargeError', 413),
    },
    {
      // A buffered function still running at API Gateway's 29 s integration limit.
      id: 'IntegrationTimeout',
      type: ResponseType.INTEGRATION_TIMEOUT,
      status: 504,
      body: body('The request timed out, please try again later', 'ServiceUnavailableError', 504),
      retryAfter: true,
    },
  ]
  for (const answer of answers) {
    api.addGatewayResponse(answer.id, {
      type: answer.type,
      statusCode: String(answer.status),
      responseHeaders: answer.retryAfter ? { 'Retry-After': "'1'" } : {},
      templates: { 'application/json': answer.body },
    })
  }
  // Every other answer API Gateway generates itself (a Lambda throttled at its reservation, an invoke failure, a
  // payload over Lambda's limit, a WAF block without its own body): its status kept, in the same combined shape.
  for (const [id, type, errorType, code] of [
    ['Default4xx', ResponseType.DEFAULT_4XX, 'BadRequestError', 400],
    ['Default5xx', ResponseType.DEFAULT_5XX, 'InternalServerError', 500],
  ] as const) {
    api.addGatewayResponse(id, { type, templates: { 'application/json': gatewayContextBody(errorType, code) } })
  }
}
