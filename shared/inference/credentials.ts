import { get } from 'node:http'
import { credentialFromEnv, secretsExtension } from '#shared/config'
import { misconfigured, type ServiceUnavailableError } from '#shared/errors/http-error'
import { logger } from '#shared/logger'
import { API_KEY_REF_PATTERN } from '#shared/schemas/model'

// Credentials are never stored in the catalog: an entry names where to find one. Secrets are fetched through the
// AWS Parameters and Secrets Lambda extension (plain HTTP on localhost, no SDK in the bundle) and cached briefly.
const SECRET_TTL_MS = 5 * 60_000
const secrets = new Map<string, { value: string; expires: number }>()

/**
 * Why a credential could not be resolved: an entry written past the checks (`misconfigured`), a variable or secret
 * the operator must set, or a secret that could not be read.
 */
class CredentialError extends Error {
  constructor(
    message: string,
    readonly kind: 'misconfigured' | 'not configured' | 'unreadable',
  ) {
    super(message)
  }
}

// Like an unusable base URL (upstream-http.ts), a 503 naming the model, never a bare 500; the reference (the variable
// or secret name) and the reason go to the log only: the caller may not be the operator.
function unavailable(model: string, error: unknown): ServiceUnavailableError {
  const kind = error instanceof CredentialError ? error.kind : 'unreadable'
  const detail = error instanceof Error ? error.message : String(error)
  logger.error('upstream credential unavailable', { model, detail })
  const why =
    kind === 'misconfigured'
      ? 'is misconfigured: its reference must be env:NAME or secret:<id>'
      : kind === 'not configured'
        ? 'is not configured'
        : 'cannot be read'
  return misconfigured(`The upstream credential of model \`${model}\` ${why}`, { cause: error })
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
          if (res.statusCode !== 200) {
            return reject(new CredentialError(`secret ${id}: extension answered ${res.statusCode}`, 'unreadable'))
          }
          try {
            const secret = (JSON.parse(text) as { SecretString?: unknown }).SecretString
            if (typeof secret !== 'string' || secret === '') {
              return reject(new CredentialError(`secret ${id} has no string`, 'not configured'))
            }
            resolve(secret)
          } catch {
            reject(new CredentialError(`secret ${id}: unreadable answer`, 'unreadable'))
          }
        })
      },
    )
    req.setTimeout(2_000, () => req.destroy(new CredentialError(`secret ${id}: extension timed out`, 'unreadable')))
    req.on('error', reject)
  })
}

async function resolveReference(ref: string, now: number): Promise<string> {
  // Written to the table past the checks (by hand, or by an older version): perhaps a key pasted in place of a
  // reference, so neither the answer nor the log repeats it.
  if (!API_KEY_REF_PATTERN.test(ref)) {
    throw new CredentialError('the reference is neither env:NAME nor secret:<id> (value not shown)', 'misconfigured')
  }
  if (ref.startsWith('env:')) {
    const value = credentialFromEnv(ref.slice(4))
    if (value === undefined) throw new CredentialError(`${ref} is not set`, 'not configured')
    return value
  }
  const id = ref.slice('secret:'.length)
  const hit = secrets.get(id)
  if (hit !== undefined && hit.expires > now) return hit.value
  const value = await fetchSecret(id)
  secrets.set(id, { value, expires: now + SECRET_TTL_MS })
  return value
}

/**
 * Resolves the credential reference of catalog model `model`: `env:NAME` reads an environment variable, `secret:<id>`
 * a Secrets Manager secret (through the Lambda extension). Undefined reference → no credential. Unresolvable, or not
 * a reference at all → 503 naming the model (docs/inference.md §4.4); a reference goes to the log only, a value that
 * is not one nowhere.
 */
export async function resolveCredential(
  ref: string | undefined,
  model: string,
  now = Date.now(),
): Promise<string | undefined> {
  if (ref === undefined) return undefined
  try {
    return await resolveReference(ref, now)
  } catch (error) {
    throw unavailable(model, error)
  }
}
