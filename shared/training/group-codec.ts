import { gunzipSync, gzipSync } from 'node:zlib'

/**
 * Bytes per stored chunk: DynamoDB's item limit is 400 KB including attribute names and key values, so a chunk leaves
 * room for the keys and the other attributes of its item.
 */
export const CHUNK_BYTES = 380_000

/**
 * Encodes one trajectory group's JSON text for storage: gzip (level 1: trajectories repeat prompts and tools, so it
 * shrinks them several-fold at little CPU cost), then split into chunks of at most `CHUNK_BYTES`.
 */
export function encodeGroup(json: string, chunkBytes = CHUNK_BYTES): Uint8Array[] {
  const packed = gzipSync(Buffer.from(json, 'utf8'), { level: 1 })
  const chunks: Uint8Array[] = []
  for (let offset = 0; offset < packed.length; offset += chunkBytes) {
    chunks.push(packed.subarray(offset, Math.min(offset + chunkBytes, packed.length)))
  }
  return chunks
}

/** Reassembles a group's JSON text from its chunks, in order (the inverse of `encodeGroup`, byte for byte). */
export function decodeGroup(chunks: readonly Uint8Array[]): string {
  return gunzipSync(Buffer.concat(chunks)).toString('utf8')
}
