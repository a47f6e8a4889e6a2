import type { APIGatewayRequestAuthorizerHandler } from 'aws-lambda'
import { authorizeRequest } from '#shared/auth/authorizer'

/** The API Gateway REQUEST authorizer shared by every authenticated route (same module as the local server's auth). */
export const handler: APIGatewayRequestAuthorizerHandler = (event) => authorizeRequest(event)
