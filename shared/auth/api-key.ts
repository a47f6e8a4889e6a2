import * as crypto from 'node:crypto'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

// The key id is a prefix of the digest: enough to address the record, too short to stand for the key.
const KEY_ID_HEX_CHARS = 20

// `crypto.hash` (Node 20.12+, 21.7+) digests a string in one call, about twice as fast as a Hash object; every
// authenticated request hashes its key.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash

/** SHA-256 of a key, hex. Keys Loom generates carry 256 bits of randomness, so a fast digest is safe to store. */
export function hashApiKey(key: string): string {
  return oneShotHash === undefined
    ? createHash('sha256').update(key, 'utf8').digest('hex')
    : oneShotHash('sha256', key, 'hex')
}

/** The public identifier of a key, derived from its digest (shown by `keys list`, used by `keys revoke`). */
export function keyIdFromHash(hash: string): string {
  return hash.slice(0, KEY_ID_HEX_CHARS)
}

/** Generates a new random API key (`loom_` + 43 base64url characters). */
export function generateApiKey(): string {
  return `loom_${randomBytes(32).toString('base64url')}`
}

/** Compares two hex digests in constant time. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right)
}
