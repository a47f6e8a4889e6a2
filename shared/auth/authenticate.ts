import { hashApiKey } from '#shared/auth/api-key'
import { findApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { listUserMemberships } from '#shared/db/membership-repository'
import { BadRequestError, ForbiddenError, UnauthorizedError } from '#shared/errors/http-error'
import { RefreshingCache } from '#shared/refreshing-cache'
import type { Principal } from '#shared/schemas/api-key'
import { limitsOf } from '#shared/schemas/rate-limit'

/** Which `Authorization` schemes a route family accepts. */
export type AuthScheme = 'bearer' | 'basic-or-bearer'

// Keyed by the key's digest, never the plaintext. A revoked key or a new membership takes effect once the entry
// expires (config.authCacheTtlMs).
const cache = new RefreshingCache<Principal | undefined>({
  name: 'API key',
  ttlMs: () => config.authCacheTtlMs,
  maxEntries: () => config.authCacheMaxEntries,
})

/** Extracts the API key from an `Authorization` header, or throws 401. */
export function parseAuthorization(header: string | undefined, scheme: AuthScheme): string {
  if (header === undefined || header.trim() === '') throw new UnauthorizedError('Authentication failed')
  const space = header.indexOf(' ')
  const kind = (space < 0 ? header : header.slice(0, space)).toLowerCase()
  const value = space < 0 ? '' : header.slice(space + 1).trim()
  if (kind === 'bearer' && value !== '') return value
  if (kind === 'basic' && scheme === 'basic-or-bearer') {
    // Weave sends base64("api:" + key); the key is the password.
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const key = colon < 0 ? '' : decoded.slice(colon + 1)
    if (key !== '') return key
  }
  throw new UnauthorizedError('Authentication failed')
}

// `background`: a refresh of a cached key, which no request waits for.
async function loadPrincipal(key: string, background: boolean): Promise<Principal | undefined> {
  const record = await findApiKey(key, { background })
  if (record === undefined || record.revokedAt !== undefined) return undefined
  const memberships = await listUserMemberships(record.userId, { background })
  const entities = [...new Set([record.entity, ...memberships.map((m) => m.entity)])].sort()
  const principal: Principal = { userId: record.userId, keyId: record.keyId, entity: record.entity, entities }
  // The limits travel with the cached principal, so enforcing them needs no look-up of its own.
  const limits = limitsOf(record)
  if (limits !== undefined) principal.limits = limits
  return principal
}

/** Resolves an API key to its principal (cached briefly), or throws 401. */
export async function authenticateKey(key: string, now = Date.now()): Promise<Principal> {
  return principalOf(await cache.get(hashApiKey(key), (background) => loadPrincipal(key, background), now))
}

function principalOf(principal: Principal | undefined): Principal {
  if (principal === undefined) throw new UnauthorizedError('Authentication failed')
  return principal
}

/**
 * Authenticates an `Authorization` header for a route family: the principal itself when the key is cached (the
 * request path's usual case, no promise), else a promise of it. Throws or rejects with 401.
 */
export function authenticate(header: string | undefined, scheme: AuthScheme): Principal | Promise<Principal> {
  const key = parseAuthorization(header, scheme)
  const principal = cache.peek(hashApiKey(key), (background) => loadPrincipal(key, background))
  return principal instanceof Promise ? principal.then(principalOf) : principalOf(principal)
}

/** Drops every cached look-up (tests, key administration in the same process). */
export function clearAuthCache(): void {
  cache.clear()
}

/** The entity part of an `<entity>/<project>` id. */
export function entityOf(projectId: string): string {
  const slash = projectId.indexOf('/')
  return slash < 0 ? projectId : projectId.slice(0, slash)
}

// What W&B refuses in a project name (the wandb SDK's project validation): these characters, control characters and
// an empty name. W&B's limit of 128 characters is not applied: longer names work (their keys are digested), and
// projects that already have one stay readable.
const PROJECT_NAME_FORBIDDEN = ['/', '\\', '#', '?', '%', ':']

/** Why W&B would refuse `name` as a project name, or undefined when it is a valid one. */
export function projectNameProblem(name: string): string | undefined {
  if (name === '') return 'a project name cannot be empty'
  const found = PROJECT_NAME_FORBIDDEN.filter((char) => name.includes(char))
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  const control = /[\u0000-\u001f\u007f]/.exec(name)
  if (control !== null) found.push(JSON.stringify(control[0]).slice(1, -1))
  return found.length === 0
    ? undefined
    : `a project name cannot contain characters: ${found.map((c) => `'${c}'`).join(', ')}`
}

/**
 * Throws 403 unless the principal belongs to the project's entity, then 400 for a project id that is not
 * `<entity>/<project>` with a project name W&B accepts (`projectNameProblem`). Besides matching W&B, this keeps keys
 * apart: keys join a project and an id with `#` (`CALL#<project>#<id>`), so a project `e/p#x` would share keys with
 * ids of `e/p` that start with `x#`; and `e//p` or `e/../p` are not projects of their own.
 */
export function assertProjectAccess(principal: Principal, projectId: string): void {
  const entity = entityOf(projectId)
  if (!principal.entities.includes(entity)) {
    throw new ForbiddenError(`You do not have access to entity '${entity}'`)
  }
  if (entity.length === projectId.length) {
    throw new BadRequestError(`Invalid project '${projectId}': expected '<entity>/<project>'`)
  }
  const problem = projectNameProblem(projectId.slice(entity.length + 1))
  if (problem !== undefined) throw new BadRequestError(`Invalid project '${projectId}': ${problem}`)
}
