import { randomFillSync } from 'node:crypto'

// Random bytes are drawn 4 KiB at a time, one `randomFillSync` per 256 ids (as Node's own `randomUUID` buffers its
// entropy): a `randomBytes(16)` per id made an id cost 5.7 µs instead of 1.2 in a loop, and 2.5% of a traced
// completion's CPU in the gateway profile (bench/gateway-profile.ts with BENCH_TRACING=1).
const POOL = Buffer.alloc(4096)
let poolAt = POOL.length

/** A new UUIDv7 (time-ordered), the id format Weave servers generate for calls, feedback and queues. */
export function uuidv7(now = Date.now()): string {
  if (poolAt + 16 > POOL.length) {
    randomFillSync(POOL)
    poolAt = 0
  }
  const bytes = Buffer.allocUnsafe(16)
  POOL.copy(bytes, 0, poolAt, poolAt + 16)
  poolAt += 16
  // The 48-bit Unix time in milliseconds, big-endian, then the version (7) and the variant (10xx) bits.
  const ms = Math.trunc(now)
  bytes.writeUInt16BE(Math.floor(ms / 2 ** 32) & 0xffff, 0)
  bytes.writeUInt32BE((ms % 2 ** 32) >>> 0, 2)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
