import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { config, tableName } from '#shared/config'
import { addRequestLimits } from '#shared/db/request-limits'
import { dynamoMaxAttempts, dynamoRetryStrategy } from '#shared/db/retry-strategy'

/**
 * The static credentials sent to a local DynamoDB server (`DYNAMODB_ENDPOINT`). DynamoDB Local refuses an access key
 * id with anything but letters and digits (`UnrecognizedClientException`); dynalite takes any.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'loomlocal', secretAccessKey: 'loomlocal' } as const

/** The name of the SDK's logger middleware (`@aws-sdk/core`), which `rawDb` leaves out. */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware'

let rawClient: DynamoDBClient | undefined
let documentClient: DynamoDBDocumentClient | undefined
let clientKey: string | undefined

/**
 * The process-wide low-level DynamoDB client, created on first use from `config` (so the local server and tests can
 * point it at an embedded DynamoDB started just before). `DYNAMODB_ENDPOINT` is meant for local DynamoDB servers
 * (dynalite, DynamoDB Local), which take any static credentials.
 */
export function rawDb(): DynamoDBClient {
  // Re-created only if the composition root re-points the endpoint or the socket timeouts (the local stack's
  // restart, tests); the retry settings are read on every retry.
  const { connectTimeoutMs, requestTimeoutMs } = config.dynamo
  const key = `${config.dynamoEndpoint}|${connectTimeoutMs}|${requestTimeoutMs}`
  if (rawClient === undefined || clientKey !== key) {
    rawClient?.destroy()
    documentClient = undefined
    const endpoint = config.dynamoEndpoint
    clientKey = key
    rawClient = new DynamoDBClient({
      region: config.region,
      maxAttempts: dynamoMaxAttempts,
      retryStrategy: dynamoRetryStrategy,
      requestHandler: {
        connectionTimeout: connectTimeoutMs,
        requestTimeout: requestTimeoutMs,
        // Without it the SDK only logs a warning when the timeout passes and keeps waiting.
        throwOnRequestTimeout: true,
      },
      ...(endpoint === undefined ? {} : { endpoint, credentials: { ...LOCAL_CREDENTIALS } }),
    })
    // Every engine then refuses what AWS's limits refuse, before sending, with a typed 4xx (shared/db/request-limits.ts).
    addRequestLimits(rawClient)
    // The SDK's logger middleware copies every input and output through its sensitive-data filter after each call,
    // to hand them to `logger.info`, a no-op here (Loom gives the SDK no logger): 8% of the time of a 10,000-span OTel
    // export against dynalite. Without it nothing is logged either way; Loom logs its own requests and failures
    // (shared/http/create-app.ts).
    rawClient.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE)
  }
  return rawClient
}

/** The process-wide DynamoDB document client (plain JS values in and out, undefined attributes dropped). */
export function db(): DynamoDBDocumentClient {
  const raw = rawDb()
  documentClient ??= DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  })
  return documentClient
}

// The SDK's steps a background call yields before: between them its CPU comes in slices of a fraction of a
// millisecond instead of one of 2-3 ms (a warm `UpdateItem` on a 2-core host; 4-6 ms when it runs once a second).
const YIELD_STEPS = ['serialize', 'build', 'finalizeRequest', 'deserialize'] as const

/** Any SDK command: what `inBackground` needs of it is its own middleware stack. */
type Command = { middlewareStack: { add(middleware: never, options: never): void } }

const yieldToEventLoop =
  <A, R>(next: (args: A) => Promise<R>) =>
  async (args: A): Promise<R> => {
    await new Promise<void>((resolve) => setImmediate(resolve))
    return next(args)
  }

/**
 * Marks a command as background work (the usage meter's writes, which a long-running server sends once a second
 * while it serves requests): before each of the SDK's steps it lets the event loop run, so requests that arrived
 * meanwhile are read and answered between the steps rather than after the whole call. Costs a few event-loop turns
 * of latency, which work no request waits for does not feel. Returns the command.
 */
export function inBackground<C extends Command>(command: C): C {
  for (const step of YIELD_STEPS) {
    // The one middleware fits every step's handler type, which the stack's overloads spell out per step.
    command.middlewareStack.add(yieldToEventLoop as never, { step, priority: 'high' } as never)
  }
  return command
}

/** How a repository sends its DynamoDB calls: `background` for work no request waits for (`inBackground`). */
export type SendOptions = { background?: boolean | undefined }

/** The command as `options` say it is sent: marked `inBackground` when it is background work. */
export function sendAs<C extends Command>(command: C, options: SendOptions | undefined): C {
  return options?.background === true ? inBackground(command) : command
}

/** The configured table's name. */
export function table(): string {
  return tableName()
}
