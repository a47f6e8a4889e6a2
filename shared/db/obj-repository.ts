import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { getAll, ITEM_REQUESTS_IN_FLIGHT, mapInParallel } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { ifConditionHolds, isConditionFailed, putIfAbsentOrRead } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { keyPart } from '#shared/db/key-part'
import { loadJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { queryAll } from '#shared/db/query'
import { type ObjVersion, ObjVersionSchema } from '#shared/schemas/obj'

// Layout (docs/data-model.md, "Tracing: objects, feedback, queues"). One partition per object:
//   PK=OBJ#<project>#<object_id>  SK=VER#<digest>        a version (val kept whole, see stored-value)
//                                 SK=ALIAS#<name>         an alias, `latest` included (GSI2 LATEST#<project> for latest)
//                                 SK=SEQ#<kind>           the version-index counter of one kind (obj-index-repository)
//                                 SK=TAG#<digest>#<tag>   a tag (GSI1 TAGS#<project>)
// Version GSIs: GSI1 OBJIDX#<project>#<object_id> / <kind>#<index> (read by v<N>, deleted kept);
// GSI2 OBJCLS#<project>#<base class> and GSI3 OBJS#<project>#<kind>, both / <created_at>#<object_id>#<digest>, live only.

/** The partition key of one object's versions, aliases, tags and counters. */
export const objPk = (project: string, objectId: string) => `OBJ#${keyPart(project)}#${keyPart(objectId)}`

/** The GSI1 keys that list a version by its index (`v<N>` reads); kept after a delete. */
export const versionIndexKeys = (project: string, objectId: string, kind: string, index: number) => ({
  GSI1PK: `OBJIDX#${keyPart(project)}#${keyPart(objectId)}`,
  GSI1SK: `${kind}#${String(index).padStart(10, '0')}`,
})

/** A version together with its value as stored JSON text (undefined when read without the value). */
export type ObjVersionRecord = { version: ObjVersion; valText: string | undefined }

// Values above INLINE_BYTES go to chunk items beside the version (large-value), under a sort-key prefix that no
// listing of this partition (VER#, ALIAS#…TAG$) matches.
const INLINE_BYTES = 300_000
const valOwner = (pk: string, digest: string) => ({ pk, skPrefix: `VAL#${keyPart(digest)}` })

async function withValue(item: Record<string, unknown>, withVal: boolean): Promise<ObjVersionRecord> {
  const version = ObjVersionSchema.parse(item)
  if (!withVal) return { version, valText: undefined }
  return { version, valText: await loadJson(valOwner(String(item.PK), version.digest), item.val as StoredJson) }
}

function liveIndexKeys(v: ObjVersion): Record<string, string> {
  const sk = `${v.created_at}#${v.object_id}#${v.digest}`
  const keys: Record<string, string> = { GSI3PK: `OBJS#${keyPart(v.project_id)}#${v.kind}`, GSI3SK: sk }
  if (v.base_object_class !== null) {
    keys.GSI2PK = `OBJCLS#${keyPart(v.project_id)}#${keyPart(v.base_object_class)}`
    keys.GSI2SK = sk
  }
  return keys
}

/**
 * Writes a new version unless one with the same digest exists (conditional put: concurrent creates of one value
 * store it once). Returns the stored item when it already existed.
 */
export async function claimObjVersion(
  version: ObjVersion,
  valText: string,
): Promise<{ created: true } | { created: false; existing: ObjVersion }> {
  const pk = objPk(version.project_id, version.object_id)
  const sk = `VER#${keyPart(version.digest)}`
  const val = await storeJson(valOwner(pk, version.digest), valText, INLINE_BYTES)
  const claim = await putIfAbsentOrRead(
    { PK: pk, SK: sk, ...version, val, ...liveIndexKeys(version) },
    async () => (await getObjVersion(version.project_id, version.object_id, version.digest, false))?.version,
  )
  return claim.written ? { created: true } : { created: false, existing: claim.existing }
}

/** Reads one version by digest (deleted ones included), optionally with its value. */
export async function getObjVersion(
  project: string,
  objectId: string,
  digest: string,
  withVal: boolean,
): Promise<ObjVersionRecord | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: objPk(project, objectId), SK: `VER#${keyPart(digest)}` },
      ConsistentRead: true,
    }),
  )
  return Item === undefined ? undefined : withValue(Item, withVal)
}

/**
 * Several versions by digest (consistent `BatchGetItem`s, deleted ones included), optionally with their values: one
 * answer per key, in order, undefined where none is stored.
 */
export async function getObjVersions(
  keys: readonly { project: string; objectId: string; digest: string }[],
  withVal: boolean,
): Promise<(ObjVersionRecord | undefined)[]> {
  const itemKeys = keys.map((k) => ({ PK: objPk(k.project, k.objectId), SK: `VER#${keyPart(k.digest)}` }))
  const items = new Map((await getAll(itemKeys)).map((item) => [`${item.PK}\u0000${item.SK}`, item]))
  // Large values are read from their chunks: a bounded number at once.
  return mapInParallel(itemKeys, ITEM_REQUESTS_IN_FLIGHT, async (key) => {
    const item = items.get(`${key.PK}\u0000${key.SK}`)
    return item === undefined ? undefined : withValue(item, withVal)
  })
}

/** The versions of one object holding index `index` (one per kind at most), deleted ones included. */
export async function findVersionsByIndex(project: string, objectId: string, index: number): Promise<ObjVersion[]> {
  const found = await Promise.all(
    ['object', 'op'].map((kind) => {
      const keys = versionIndexKeys(project, objectId, kind, index)
      return queryIndexAll({
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK = :sk',
        ExpressionAttributeValues: { ':pk': keys.GSI1PK, ':sk': keys.GSI1SK },
      })
    }),
  )
  return found.flat().map((item) => ObjVersionSchema.parse(item))
}

/** Every version of one object (deleted ones included), optionally with values. */
export async function listObjectVersions(
  project: string,
  objectId: string,
  withVal: boolean,
): Promise<ObjVersionRecord[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': objPk(project, objectId), ':sk': 'VER#' },
    ConsistentRead: true,
  })
  return Promise.all(items.map((item) => withValue(item, withVal)))
}

/** Live versions of a project, one kind, oldest first (sparse index: deleted versions drop out of it). */
export async function listLiveVersionsByKind(
  project: string,
  kind: string,
  withVal: boolean,
): Promise<ObjVersionRecord[]> {
  const items = await queryIndexAll({
    IndexName: 'GSI3',
    KeyConditionExpression: 'GSI3PK = :pk',
    ExpressionAttributeValues: { ':pk': `OBJS#${keyPart(project)}#${kind}` },
  })
  return Promise.all(items.map((item) => withValue(item, withVal)))
}

/** Live versions of a project with one base object class, oldest first. */
export async function listLiveVersionsByClass(
  project: string,
  cls: string,
  withVal: boolean,
): Promise<ObjVersionRecord[]> {
  const items = await queryIndexAll({
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk',
    ExpressionAttributeValues: { ':pk': `OBJCLS#${keyPart(project)}#${keyPart(cls)}` },
  })
  return Promise.all(items.map((item) => withValue(item, withVal)))
}

/**
 * Soft-deletes a live version: sets `deleted_at` and drops it from the live listings. False if it was not live. A
 * version found deleted at exactly `at` counts as deleted by this call: its first attempt was applied and the answer
 * lost, so the SDK's retry failed the condition.
 */
export async function markVersionDeleted(v: ObjVersion, at: string): Promise<boolean> {
  const deleted = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${keyPart(v.digest)}` },
        UpdateExpression: 'SET deleted_at = :at REMOVE GSI2PK, GSI2SK, GSI3PK, GSI3SK',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deleted_at)',
        ExpressionAttributeValues: { ':at': at },
      }),
    ),
  )
  if (deleted !== undefined) return true
  const current = await getObjVersion(v.project_id, v.object_id, v.digest, false)
  return current?.version.deleted_at === at
}

const REVIVE_ROUNDS = 5

/**
 * Revives a deleted version (re-publishing the same value), back in the live listings. Idempotent: a version found
 * live already (a concurrent re-publish won, or this call's own answer was lost) is left as it is.
 */
export async function reviveVersion(v: ObjVersion, createdAt: string): Promise<void> {
  const keys = liveIndexKeys({ ...v, created_at: createdAt })
  const names = Object.keys(keys)
  for (let round = 0; round < REVIVE_ROUNDS; round++) {
    try {
      await db().send(
        new UpdateCommand({
          TableName: table(),
          Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${keyPart(v.digest)}` },
          UpdateExpression: `SET created_at = :c, ${names.map((n) => `${n} = :${n}`).join(', ')} REMOVE deleted_at`,
          ConditionExpression: 'attribute_exists(deleted_at)',
          ExpressionAttributeValues: { ':c': createdAt, ...Object.fromEntries(names.map((n) => [`:${n}`, keys[n]])) },
        }),
      )
      return
    } catch (error) {
      if (!isConditionFailed(error)) throw error
      const current = await getObjVersion(v.project_id, v.object_id, v.digest, false)
      if (current === undefined) throw error
      if (!current.version.deleted_at) return
      // Deleted again between the failed condition and the read: revive it once more.
    }
  }
  throw new Error(`version ${v.digest} of ${v.object_id} kept being deleted while it was revived`)
}
