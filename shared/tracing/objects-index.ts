import {
  advanceIndexCounter,
  getIndexCounter,
  type IndexCounter,
  markIndexRecorded,
  setVersionIndex,
  type VersionKey,
} from '#shared/db/obj-index-repository'
import { getObjVersion } from '#shared/db/obj-repository'
import { dependencyUnavailable } from '#shared/errors/error-response'

// Each failed round means another version took the index it tried for, so this bounds the creates of one object and
// kind racing this one, not the time a single create may take.
const MAX_ROUNDS = 100

async function record(v: VersionKey, index: number): Promise<number> {
  const standing = await setVersionIndex(v, index)
  await markIndexRecorded(v, index + 1)
  return standing
}

/**
 * Gives a claimed version its index (docs/tracing.md §8.3) exactly once and returns it: safe to run again after a
 * failure at any step, concurrently for the same version (a retried create) and for other versions of the object.
 * `seenBeforeClaim` is a counter read before the version's claim was written, which spares the first round reading the
 * version.
 *
 * Each round reads the counter, then the version. The counter names the digest that took its last index: if it is
 * this one, that index is this version's. Otherwise an index already recorded on the version stands (another attempt
 * finished it). Otherwise the round records the last taker's index for it if it is not known to be recorded (its
 * create may have stopped there), and takes the next index by a conditional update from the value read. Read in that
 * order, a version with no index found after a counter naming another digest holds no index yet: whoever moved the
 * counter past a taker recorded that taker's index first.
 */
export async function assignVersionIndex(v: VersionKey, seenBeforeClaim?: IndexCounter): Promise<number> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const counter = round === 0 && seenBeforeClaim !== undefined ? seenBeforeClaim : await getIndexCounter(v)
    if (counter.last === v.digest) return counter.lastRecorded ? counter.next - 1 : record(v, counter.next - 1)
    // A version claimed after the counter was read cannot have an index from before that read.
    if (round > 0 || seenBeforeClaim === undefined) {
      const current = await getObjVersion(v.project_id, v.object_id, v.digest, false)
      if (current === undefined) throw new Error(`version ${v.digest} of ${v.object_id} is not claimed`)
      if (current.version.version_index !== undefined) return current.version.version_index
    }
    if (counter.last !== undefined && !counter.lastRecorded) {
      await setVersionIndex({ ...v, digest: counter.last }, counter.next - 1)
    }
    if (await advanceIndexCounter(v, counter)) return record(v, counter.next)
  }
  throw dependencyUnavailable(new Error(`the version index of ${v.object_id} stayed contended`))
}
