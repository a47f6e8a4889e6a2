import { config } from '#shared/config'

/** What a redacted value is stored as (the reference's `REDACTED_VALUE`). */
export const REDACTED_VALUE = 'REDACTED'

/**
 * Keys whose values are never stored: the reference's list (`wandb/weave` `weave/utils/sanitize.py`: `api_key`,
 * `auth_headers`, `authorization`) plus other credential-shaped names. Matched as the reference matches: the whole
 * key, case-insensitively, at any depth. Not `token`: OpenAI's logprobs use it for the generated text.
 */
export const DEFAULT_REDACT_KEYS: readonly string[] = [
  'api_key',
  'auth_headers',
  'authorization',
  'apikey',
  'api-key',
  'x-api-key',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'password',
  'passwd',
  'client_secret',
  'secret_key',
  'access_token',
  'refresh_token',
  'session_token',
  'aws_secret_access_key',
  'private_key',
]

// The defaults plus `LOOM_REDACT_KEYS`, lower-cased once; the length range skips most keys without lower-casing them.
const KEYS = new Set([...DEFAULT_REDACT_KEYS, ...config.tracing.redactKeys].map((k) => k.toLowerCase()))
const lengths = [...KEYS].map((k) => k.length)
const MIN = Math.min(...lengths)
const MAX = Math.max(...lengths)

/** Whether a value under this key is replaced by `REDACTED` at ingest. */
export function shouldRedact(key: string): boolean {
  return key.length >= MIN && key.length <= MAX && KEYS.has(key.toLowerCase())
}

/**
 * A `JSON.stringify` replacer that stores `REDACTED` in place of every value under a redacted key, nested at any
 * depth (array indexes never match: no redact key is a number).
 */
export function redactingReplacer(this: unknown, key: string, value: unknown): unknown {
  return key !== '' && shouldRedact(key) ? REDACTED_VALUE : value
}
