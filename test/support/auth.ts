import { randomUUID } from 'node:crypto'
import { createApiKey } from '#shared/auth/key-admin'
import type { RateLimits } from '#shared/schemas/rate-limit'

/** A freshly registered user with a key in its own entity, plus ready-made `Authorization` headers. */
export type TestCaller = {
  key: string
  keyId: string
  userId: string
  entity: string
  bearer: { authorization: string }
  basic: { authorization: string }
}

/**
 * Registers a new user and key in a new (or the given) entity, with the given key limits (through the real key
 * administration code); unique per call so tests never share state.
 */
export async function newCaller(entity = `ent-${randomUUID().slice(0, 8)}`, limits?: RateLimits): Promise<TestCaller> {
  const userId = `user-${randomUUID().slice(0, 8)}`
  const { key, record } = await createApiKey({ userId, entity, ...(limits === undefined ? {} : { limits }) })
  return {
    key,
    keyId: record.keyId,
    userId,
    entity,
    bearer: { authorization: `Bearer ${key}` },
    basic: { authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}` },
  }
}

/** JSON request init for `app.request`. */
export function jsonInit(body: unknown, headers: Record<string, string>, method = 'POST'): RequestInit {
  return { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
}
