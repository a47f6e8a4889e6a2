import { createHash } from 'node:crypto'

// DynamoDB caps partition keys at 2,048 bytes and sort keys at 1,024; request values (project ids, digests, refs,
// client ids) are not capped by the contract, so long ones enter keys as a digest instead of failing the write.
const MAX_PART_BYTES = 200

/** A request value as it may appear inside a key: itself when short, else `~` + base64url(sha256(value)). */
export function keyPart(value: string): string {
  return Buffer.byteLength(value, 'utf8') <= MAX_PART_BYTES
    ? value
    : `~${createHash('sha256').update(value).digest('base64url')}`
}
