import { get } from 'node:http'
import { credentialFromEnv, secretsExtension } from '#shared/config'
import { UpstreamError } from '#shared/inference/upstream-http'
import { logger } from '#shared/logger'

// Credentials are never stored in the catalog: an entry names where to find one. Secrets are fetched through the
// AWS Parameters and Secrets Lambda extension (plain HTTP on localhost, no SDK in the bundle) and cached briefly.
const SECRET_TTL_MS = 5 * 60_000
const secrets = new Map<string, { value: string; expires: number }>()

function misconfigured(detail: string): UpstreamError {
  logger.error('upstream credential unavailable', { detail })
  return new UpstreamError(500, 'The server had an error while processing your request')
}

function fetchSecret(id: string): Promise<string> {
  const { port, token } = secretsExtension()
  const path = `/secretsmanager/get?secretId=${encodeURIComponent(id)}`
  return new Promise((resolve, reject) => {
    const req = get(
      { host: '127.0.0.1', port, path, headers: { 'X-Aws-Parameters-Secrets-Token': token ?? '' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (piece: string) => {
          text += piece
        })
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(misconfigured(`secret ${id}: extension answered ${res.statusCode}`))
          try {
            const secret = (JSON.parse(text) as { SecretString?: unknown }).SecretString
            if (typeof secret !== 'string' || secret === '') return reject(misconfigured(`secret ${id} has no string`))
            resolve(secret)
          } catch {
            reject(misconfigured(`secret ${id}: unreadable answer`))
          }
        })
      },
    )
    req.setTimeout(2_000, () => req.destroy(misconfigured(`secret ${id}: extension timed out`)))
    req.on('error', (error) => reject(error instanceof UpstreamError ? error : misconfigured(String(error))))
  })
}

/**
 * Resolves a catalog entry's credential reference: `env:NAME` reads an environment variable, `secret:<id>` a Secrets
 * Manager secret (through the Lambda extension). Undefined reference → no credential. Unresolvable → 500.
 */
export async function resolveCredential(ref: string | undefined, now = Date.now()): Promise<string | undefined> {
  if (ref === undefined) return undefined
  if (ref.startsWith('env:')) {
    const value = credentialFromEnv(ref.slice(4))
    if (value === undefined) throw misconfigured(`${ref} is not set`)
    return value
  }
  if (ref.startsWith('secret:')) {
    const id = ref.slice(7)
    const hit = secrets.get(id)
    if (hit !== undefined && hit.expires > now) return hit.value
    const value = await fetchSecret(id)
    secrets.set(id, { value, expires: now + SECRET_TTL_MS })
    return value
  }
  throw misconfigured(`unknown credential reference ${ref}`)
}
