import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { putIfAbsentOrRead } from '#shared/db/conditional-write'
import { keyPart } from '#shared/db/key-part'

// Retried writes that generate server-side ids (docs/tracing.md §1: clients retry; the Python client marks retries with
// `X-Weave-Retry-Id`): PK=RETRY#<kind>#<scope>#<retry key> SK=RETRY holds, as JSON, what the first attempt generated,
// so a retry reuses the same ids instead of creating duplicates. Conditional put, no transaction.

/**
 * Records `generated` for a retry key unless the key was seen before; returns what the first attempt recorded (this
 * call's `generated` when it is the first). `request` fingerprints the request (a digest of what the ids are for): a
 * retry key that comes back with another request is not a retry of it (a client reusing its retry ids), so that
 * request gets its own fresh `generated`, not recorded, rather than ids made for different items. A record written
 * before fingerprints were kept matches any request.
 */
export async function claimRetryValue<T>(
  kind: string,
  scope: string,
  retryKey: string,
  generated: T,
  schema: { parse: (value: unknown) => T },
  request: string,
): Promise<T> {
  const key = { PK: `RETRY#${kind}#${keyPart(scope)}#${keyPart(retryKey)}`, SK: 'RETRY' }
  const claim = await putIfAbsentOrRead({ ...key, value: JSON.stringify(generated), request }, async () => {
    const { Item } = await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))
    return typeof Item?.value === 'string' ? { value: Item.value, request: Item.request } : undefined
  })
  if (claim.written) return generated
  const { value, request: first } = claim.existing
  return first === undefined || first === request ? schema.parse(JSON.parse(value)) : generated
}
