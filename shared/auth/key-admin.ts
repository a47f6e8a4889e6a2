import { digestsEqual, generateApiKey, hashApiKey, keyIdFromHash } from '#shared/auth/api-key'
import { getApiKey, putApiKey } from '#shared/db/api-key-repository'
import type { SendOptions } from '#shared/db/client'
import { addMembership } from '#shared/db/membership-repository'
import { ConflictError } from '#shared/errors/http-error'
import type { ApiKeyRecord } from '#shared/schemas/api-key'
import { limitsOf, type RateLimits } from '#shared/schemas/rate-limit'

/** Options for creating or registering a key. */
export type CreateKeyOptions = {
  userId: string
  entity: string
  name?: string
  /** A chosen plaintext (bootstrap keys); generated when absent. */
  key?: string
  now?: Date
  /** The key's `rpm`, `tpm` and `concurrency`; unset limits mean unlimited. */
  limits?: RateLimits
}

/**
 * Creates an API key for a user in an entity (adding the membership), idempotently when the plaintext is given:
 * registering the same key for the same user again returns the existing record. The plaintext is returned to the
 * caller once and stored nowhere.
 */
export async function createApiKey(
  options: CreateKeyOptions,
): Promise<{ key: string; record: ApiKeyRecord; created: boolean }> {
  const key = options.key ?? generateApiKey()
  const keyHash = hashApiKey(key)
  const now = (options.now ?? new Date()).toISOString()
  await addMembership({ userId: options.userId, entity: options.entity, role: 'member', addedAt: now })
  const candidate: ApiKeyRecord = {
    keyId: keyIdFromHash(keyHash),
    keyHash,
    userId: options.userId,
    entity: options.entity,
    createdAt: now,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...limitsOf(options.limits ?? {}),
  }
  const { record, created } = await putApiKey(candidate)
  if (!created && (record.userId !== options.userId || !digestsEqual(record.keyHash, keyHash))) {
    throw new ConflictError('That key is already registered to another user')
  }
  return { key, record, created }
}

/** Looks up a key by its plaintext; undefined when unknown. Compares the stored digest in constant time. */
export async function findApiKey(key: string, options?: SendOptions): Promise<ApiKeyRecord | undefined> {
  const keyHash = hashApiKey(key)
  const record = await getApiKey(keyIdFromHash(keyHash), options)
  if (record === undefined || !digestsEqual(record.keyHash, keyHash)) return undefined
  return record
}
