import { createApiKey } from '#shared/auth/key-admin'
import { claimMarker } from '#shared/db/marker-repository'
import type { ApiKeyRecord } from '#shared/schemas/api-key'

/** What start-up did about the local key: registered the configured one, generated a first one, or nothing. */
export type BootstrapResult =
  | { kind: 'configured'; record: ApiKeyRecord; created: boolean }
  | { kind: 'generated'; key: string; record: ApiKeyRecord }
  | { kind: 'none' }

// True for the first start of a table only, whichever way it bootstraps.
function claimFirstStart(): Promise<boolean> {
  return claimMarker('first-start-key', new Date().toISOString())
}

/**
 * Makes sure the local stack can be used: registers `key` idempotently for the user and entity when given; otherwise
 * generates a key on the very first start only (the plaintext is returned once, to be printed, and never again). A
 * start with `key` counts as the first start too: a table that already had a start never gets a generated key later.
 */
export async function bootstrapKey(options: {
  key?: string | undefined
  userId: string
  entity: string
}): Promise<BootstrapResult> {
  if (options.key !== undefined) {
    const { record, created } = await createApiKey({
      userId: options.userId,
      entity: options.entity,
      key: options.key,
      name: 'bootstrap',
    })
    // Claimed after the key is registered, so a start whose registration fails leaves the first start to come.
    await claimFirstStart()
    return { kind: 'configured', record, created }
  }
  if (!(await claimFirstStart())) return { kind: 'none' }
  const { key, record } = await createApiKey({ userId: options.userId, entity: options.entity, name: 'first-start' })
  return { kind: 'generated', key, record }
}
