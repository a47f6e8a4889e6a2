import { digestsEqual, generateApiKey, hashApiKey, keyIdFromHash } from '#shared/auth/api-key'
import { getApiKey, type LimitChange, putApiKey, setActiveApiKeyLimits } from '#shared/db/api-key-repository'
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

// Ids are a fixed-length prefix of a hex digest (api-key.ts); generated keys start with `loom_`.
const KEY_ID_LENGTH = keyIdFromHash(hashApiKey('')).length
const KEY_ID_PATTERN = new RegExp(`^[0-9a-f]{${KEY_ID_LENGTH}}$`)

/**
 * What an argument given as a key id is: a key id (`keys list`'s form), a plaintext key pasted in its place (`loom_…`,
 * or longer than any id), or neither. Only a key id is safe to echo: the others may be a key, generated or configured.
 */
export function classifyKeyIdArgument(text: string): 'key-id' | 'api-key' | 'other' {
  if (KEY_ID_PATTERN.test(text)) return 'key-id'
  return text.startsWith('loom_') || text.length > KEY_ID_LENGTH ? 'api-key' : 'other'
}

/** What `setActiveKeyLimits` did: the updated record, or why it wrote nothing. */
export type SetLimitsOutcome =
  | { kind: 'updated'; record: ApiKeyRecord }
  | { kind: 'unknown' }
  | { kind: 'revoked'; revokedAt: string }

/**
 * Sets or removes the limits of a key that is not revoked (a number sets a limit, `null` removes it), in one
 * conditional write; when nothing was written, a read says whether the key is unknown or revoked.
 */
export async function setActiveKeyLimits(keyId: string, change: LimitChange): Promise<SetLimitsOutcome> {
  const updated = await setActiveApiKeyLimits(keyId, change)
  if (updated !== undefined) return { kind: 'updated', record: updated }
  const record = await getApiKey(keyId)
  if (record === undefined) return { kind: 'unknown' }
  if (record.revokedAt !== undefined) return { kind: 'revoked', revokedAt: record.revokedAt }
  // Keys are never un-revoked or re-created active, so a refused write always finds one of the cases above.
  throw new ConflictError(`Key ${keyId} changed while its limits were written; retry`)
}
