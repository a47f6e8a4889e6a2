import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { ifConditionHolds, isConditionFailed } from '#shared/db/conditional-write'
import { keyPart } from '#shared/db/key-part'
import { getObjVersion, objPk, versionIndexKeys } from '#shared/db/obj-repository'
import type { ObjVersion } from '#shared/schemas/obj'

// Version indexes (docs/tracing.md §8.3: 0-based creation order per object id and kind). A counter item per kind,
// PK=OBJ#<project>#<object_id> SK=SEQ#<kind>, holds `next_index`, the digest that took the index before it
// (`last_digest`) and whether that index is recorded on its version (`last_recorded`). The counter only moves by a
// conditional update from the value just read, and only after the previous taker's index is recorded, so every index
// names exactly one version even when writes are retried or answers lost (the draw loop is in
// shared/tracing/objects-index.ts).

/** The keys of a version: what index bookkeeping needs of it. */
export type VersionKey = Pick<ObjVersion, 'project_id' | 'object_id' | 'digest' | 'kind'>

/**
 * The version-index counter of one `(object_id, kind)`: the next index to hand out, the digest that took the index
 * before it (absent on counters written before it was recorded), and whether that index is known to be recorded on
 * its version.
 */
export type IndexCounter = { next: number; last: string | undefined; lastRecorded: boolean }

const seqKey = (v: VersionKey) => ({ PK: objPk(v.project_id, v.object_id), SK: `SEQ#${v.kind}` })

/** Reads the version-index counter of a version's object and kind (strongly consistent; 0 when none yet). */
export async function getIndexCounter(v: VersionKey): Promise<IndexCounter> {
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: seqKey(v), ConsistentRead: true }))
  return {
    next: typeof Item?.next_index === 'number' ? Item.next_index : 0,
    last: typeof Item?.last_digest === 'string' ? Item.last_digest : undefined,
    lastRecorded: Item?.last_recorded === true,
  }
}

/**
 * Hands index `seen.next` to `v` if the counter still reads `seen.next` (conditional update): false when another
 * version took it first. The winner's digest is stored with it, so a writer whose answer was lost (the SDK's retry then
 * fails the condition) finds its own digest there on the next read instead of drawing a second index.
 */
export async function advanceIndexCounter(v: VersionKey, seen: IndexCounter): Promise<boolean> {
  const first = seen.next === 0
  const advanced = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: seqKey(v),
        UpdateExpression: 'SET next_index = :next, last_digest = :d, last_recorded = :no',
        ConditionExpression: first ? 'attribute_not_exists(next_index)' : 'next_index = :seen',
        ExpressionAttributeValues: {
          ':next': seen.next + 1,
          ':d': v.digest,
          ':no': false,
          ...(first ? {} : { ':seen': seen.next }),
        },
      }),
    ),
  )
  return advanced !== undefined
}

/** Notes on the counter that `v`, its last taker, has its index recorded, so later creates need not check it. */
export async function markIndexRecorded(v: VersionKey, next: number): Promise<void> {
  // A failed condition means the counter moved on: whoever moved it saw to this index first.
  await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: seqKey(v),
        UpdateExpression: 'SET last_recorded = :yes',
        ConditionExpression: 'next_index = :next AND last_digest = :d',
        ExpressionAttributeValues: { ':yes': true, ':next': next, ':d': v.digest },
      }),
    ),
  )
}

/** Records a version's index once (a second writer cannot overwrite it); returns the index that stands. */
export async function setVersionIndex(v: VersionKey, index: number): Promise<number> {
  const keys = versionIndexKeys(v.project_id, v.object_id, v.kind, index)
  try {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${keyPart(v.digest)}` },
        UpdateExpression: 'SET version_index = :i, GSI1PK = :pk, GSI1SK = :sk',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(version_index)',
        ExpressionAttributeValues: { ':i': index, ':pk': keys.GSI1PK, ':sk': keys.GSI1SK },
      }),
    )
    return index
  } catch (error) {
    if (!isConditionFailed(error)) throw error
    const current = await getObjVersion(v.project_id, v.object_id, v.digest, false)
    if (current?.version.version_index === undefined) throw error
    return current.version.version_index
  }
}
