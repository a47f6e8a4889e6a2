import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { loadJson, type StoredJson, storeJson } from '#shared/db/large-value'
import { queryAll } from '#shared/db/query'
import { type ObjVersion, ObjVersionSchema } from '#shared/schemas/obj'

// Layout (docs/data-model.md, "Tracing: objects, feedback, queues"). One partition per object:
//   PK=OBJ#<project>#<object_id>  SK=VER#<digest>        a version (val kept whole, see stored-value)
//                                 SK=ALIAS#<name>         an alias, `latest` included (GSI2 LATEST#<project> for latest)
//                                 SK=SEQ#<kind>           the version-index counter of one kind
//                                 SK=TAG#<digest>#<tag>   a tag (GSI1 TAGS#<project>)
// Version GSIs: GSI1 OBJIDX#<project>#<object_id> / <kind>#<index> (read by v<N>, deleted kept);
// GSI2 OBJCLS#<project>#<base class> and GSI3 OBJS#<project>#<kind>, both / <created_at>#<object_id>#<digest>, live only.

const objPk = (project: string, objectId: string) => `OBJ#${project}#${objectId}`
const pad = (n: number) => String(n).padStart(10, '0')

/** A version together with its value as stored JSON text (undefined when read without the value). */
export type ObjVersionRecord = { version: ObjVersion; valText: string | undefined }

// Values above INLINE_BYTES go to chunk items beside the version (large-value), under a sort-key prefix that no
// listing of this partition (VER#, ALIAS#…TAG$) matches.
const INLINE_BYTES = 300_000
const valOwner = (pk: string, digest: string) => ({ pk, skPrefix: `VAL#${digest}` })

async function withValue(item: Record<string, unknown>, withVal: boolean): Promise<ObjVersionRecord> {
  const version = ObjVersionSchema.parse(item)
  if (!withVal) return { version, valText: undefined }
  return { version, valText: await loadJson(valOwner(String(item.PK), version.digest), item.val as StoredJson) }
}

function liveIndexKeys(v: ObjVersion): Record<string, string> {
  const sk = `${v.created_at}#${v.object_id}#${v.digest}`
  const keys: Record<string, string> = { GSI3PK: `OBJS#${v.project_id}#${v.kind}`, GSI3SK: sk }
  if (v.base_object_class !== null) {
    keys.GSI2PK = `OBJCLS#${v.project_id}#${v.base_object_class}`
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
  const sk = `VER#${version.digest}`
  const val = await storeJson(valOwner(pk, version.digest), valText, INLINE_BYTES)
  try {
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: pk, SK: sk, ...version, val, ...liveIndexKeys(version) },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    )
    return { created: true }
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error
    const existing = await getObjVersion(version.project_id, version.object_id, version.digest, false)
    if (existing === undefined) throw error
    return { created: false, existing: existing.version }
  }
}

/** Takes the next version index of `(project, kind, object_id)` from its counter (0-based). */
export async function nextVersionIndex(project: string, objectId: string, kind: string): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: objPk(project, objectId), SK: `SEQ#${kind}` },
      UpdateExpression: 'ADD next_index :one',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  )
  return Number(out.Attributes?.next_index) - 1
}

/** Records a version's index once (a second writer cannot overwrite it); returns the index that stands. */
export async function setVersionIndex(v: ObjVersion, index: number): Promise<number> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${v.digest}` },
        UpdateExpression: 'SET version_index = :i, GSI1PK = :pk, GSI1SK = :sk',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(version_index)',
        ExpressionAttributeValues: {
          ':i': index,
          ':pk': `OBJIDX#${v.project_id}#${v.object_id}`,
          ':sk': `${v.kind}#${pad(index)}`,
        },
      }),
    )
    return index
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error
    const current = await getObjVersion(v.project_id, v.object_id, v.digest, false)
    if (current?.version.version_index === undefined) throw error
    return current.version.version_index
  }
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
      Key: { PK: objPk(project, objectId), SK: `VER#${digest}` },
      ConsistentRead: true,
    }),
  )
  return Item === undefined ? undefined : withValue(Item, withVal)
}

/** The versions of one object holding index `index` (one per kind at most), deleted ones included. */
export async function findVersionsByIndex(project: string, objectId: string, index: number): Promise<ObjVersion[]> {
  const found = await Promise.all(
    ['object', 'op'].map((kind) =>
      queryAll({
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK = :sk',
        ExpressionAttributeValues: { ':pk': `OBJIDX#${project}#${objectId}`, ':sk': `${kind}#${pad(index)}` },
      }),
    ),
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
  const items = await queryAll({
    IndexName: 'GSI3',
    KeyConditionExpression: 'GSI3PK = :pk',
    ExpressionAttributeValues: { ':pk': `OBJS#${project}#${kind}` },
  })
  return Promise.all(items.map((item) => withValue(item, withVal)))
}

/** Live versions of a project with one base object class, oldest first. */
export async function listLiveVersionsByClass(
  project: string,
  cls: string,
  withVal: boolean,
): Promise<ObjVersionRecord[]> {
  const items = await queryAll({
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk',
    ExpressionAttributeValues: { ':pk': `OBJCLS#${project}#${cls}` },
  })
  return Promise.all(items.map((item) => withValue(item, withVal)))
}

/** Soft-deletes a live version: sets `deleted_at` and drops it from the live listings. False if not live. */
export async function markVersionDeleted(v: ObjVersion, at: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${v.digest}` },
        UpdateExpression: 'SET deleted_at = :at REMOVE GSI2PK, GSI2SK, GSI3PK, GSI3SK',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deleted_at)',
        ExpressionAttributeValues: { ':at': at },
      }),
    )
    return true
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false
    throw error
  }
}

/** Revives a deleted version (re-publishing the same value), back in the live listings. */
export async function reviveVersion(v: ObjVersion, createdAt: string): Promise<void> {
  const revived = { ...v, created_at: createdAt }
  const keys = liveIndexKeys(revived)
  const names = Object.keys(keys)
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: { PK: objPk(v.project_id, v.object_id), SK: `VER#${v.digest}` },
      UpdateExpression: `SET created_at = :c, ${names.map((n) => `${n} = :${n}`).join(', ')} REMOVE deleted_at`,
      ConditionExpression: 'attribute_exists(deleted_at)',
      ExpressionAttributeValues: { ':c': createdAt, ...Object.fromEntries(names.map((n) => [`:${n}`, keys[n]])) },
    }),
  )
}

/** One alias row of an object. */
export type AliasRow = { alias: string; digest: string }

/** Points an alias of an object at a digest (moving it if it pointed elsewhere). */
export async function putAlias(project: string, objectId: string, alias: string, digest: string): Promise<void> {
  const index =
    alias === 'latest'
      ? { GSI2PK: `LATEST#${project}`, GSI2SK: objectId }
      : { GSI1PK: `ALIASES#${project}`, GSI1SK: `${alias}#${objectId}` }
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: {
        PK: objPk(project, objectId),
        SK: `ALIAS#${alias}`,
        project_id: project,
        object_id: objectId,
        alias,
        digest,
        ...index,
      },
    }),
  )
}

/** Removes an alias of an object (no-op when absent). */
export async function deleteAlias(project: string, objectId: string, alias: string): Promise<void> {
  await db().send(
    new DeleteCommand({ TableName: table(), Key: { PK: objPk(project, objectId), SK: `ALIAS#${alias}` } }),
  )
}

/** The digest an alias of an object points at. */
export async function getAlias(project: string, objectId: string, alias: string): Promise<string | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: objPk(project, objectId), SK: `ALIAS#${alias}` },
      ConsistentRead: true,
    }),
  )
  return typeof Item?.digest === 'string' ? Item.digest : undefined
}

/** The `latest` digests of many objects of a project (batched GetItem, 100 keys a call). */
export async function getLatestDigests(project: string, objectIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const ids = [...new Set(objectIds)]
  for (let i = 0; i < ids.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = ids
      .slice(i, i + 100)
      .map((id) => ({ PK: objPk(project, id), SK: 'ALIAS#latest' }))
    while (keys !== undefined && keys.length > 0) {
      const res: BatchGetCommandOutput = await db().send(
        new BatchGetCommand({ RequestItems: { [table()]: { Keys: keys, ConsistentRead: true } } }),
      )
      for (const item of res.Responses?.[table()] ?? []) out.set(String(item.object_id), String(item.digest))
      keys = res.UnprocessedKeys?.[table()]?.Keys
    }
  }
  return out
}

/** Every `latest` alias of a project (GSI2: one row per object). */
export async function listLatestAliases(project: string): Promise<Map<string, string>> {
  const items = await queryAll({
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk',
    ExpressionAttributeValues: { ':pk': `LATEST#${project}` },
  })
  return new Map(items.map((item) => [String(item.object_id), String(item.digest)]))
}

/** Whether any object of a project has a `latest` alias (one row read). */
export async function hasLatestAlias(project: string): Promise<boolean> {
  const page = await db().send(
    new QueryCommand({
      TableName: table(),
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk',
      ExpressionAttributeValues: { ':pk': `LATEST#${project}` },
      Limit: 1,
    }),
  )
  return (page.Items ?? []).length > 0
}

/** Aliases and tags of one object: `{aliases, tags: digest → tags}` (one Query over its metadata rows). */
export async function getObjectLabels(
  project: string,
  objectId: string,
): Promise<{ aliases: AliasRow[]; tags: Map<string, string[]> }> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :a AND :b',
    ExpressionAttributeValues: { ':pk': objPk(project, objectId), ':a': 'ALIAS#', ':b': 'TAG$' },
    ConsistentRead: true,
  })
  const aliases: AliasRow[] = []
  const tags = new Map<string, string[]>()
  for (const item of items) {
    const sk = String(item.SK)
    if (sk.startsWith('ALIAS#')) aliases.push({ alias: String(item.alias), digest: String(item.digest) })
    else if (sk.startsWith('TAG#')) {
      const digest = String(item.digest)
      tags.set(digest, [...(tags.get(digest) ?? []), String(item.tag)])
    }
  }
  return { aliases, tags }
}

/** Adds a tag to a version (idempotent: one item per (version, tag)). */
export async function putTag(project: string, objectId: string, digest: string, tag: string): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: {
        PK: objPk(project, objectId),
        SK: `TAG#${digest}#${tag}`,
        GSI1PK: `TAGS#${project}`,
        GSI1SK: `${tag}#${objectId}#${digest}`,
        project_id: project,
        object_id: objectId,
        digest,
        tag,
      },
    }),
  )
}

/** Removes a tag from a version (no-op when absent). */
export async function deleteTag(project: string, objectId: string, digest: string, tag: string): Promise<void> {
  await db().send(
    new DeleteCommand({ TableName: table(), Key: { PK: objPk(project, objectId), SK: `TAG#${digest}#${tag}` } }),
  )
}

/** `(object_id, digest)` pairs carrying a tag, from the project's tag index. */
export async function listTaggedVersions(
  project: string,
  tag: string,
): Promise<{ objectId: string; digest: string }[]> {
  const items = await queryAll({
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
    ExpressionAttributeValues: { ':pk': `TAGS#${project}`, ':sk': `${tag}#` },
  })
  return items.filter((i) => i.tag === tag).map((i) => ({ objectId: String(i.object_id), digest: String(i.digest) }))
}

/** `(object_id, digest)` pairs an alias names, from the project's alias index. */
export async function listAliasedVersions(
  project: string,
  alias: string,
): Promise<{ objectId: string; digest: string }[]> {
  const items = await queryAll({
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
    ExpressionAttributeValues: { ':pk': `ALIASES#${project}`, ':sk': `${alias}#` },
  })
  return items
    .filter((i) => i.alias === alias)
    .map((i) => ({ objectId: String(i.object_id), digest: String(i.digest) }))
}

/**
 * Distinct tag or alias names of a project, sorted. Skips past each name seen, so a name used by many versions costs
 * one page, not one read per use.
 */
export async function listDistinctLabels(project: string, kind: 'TAGS' | 'ALIASES'): Promise<string[]> {
  const names = new Set<string>()
  let last = ''
  let after = ''
  for (;;) {
    const page = await db().send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'GSI1',
        KeyConditionExpression: after === '' ? 'GSI1PK = :pk' : 'GSI1PK = :pk AND GSI1SK > :after',
        ExpressionAttributeValues: { ':pk': `${kind}#${project}`, ...(after === '' ? {} : { ':after': after }) },
        Limit: 100,
      }),
    )
    const items = page.Items ?? []
    for (const item of items) {
      last = String(kind === 'TAGS' ? item.tag : item.alias)
      names.add(last)
    }
    if (items.length === 0 || page.LastEvaluatedKey === undefined) break
    // Keys are `<name>#…`; `$` is the code point after `#`, so this skips the rest of the last name's rows.
    after = `${last}$`
  }
  return [...names].sort()
}
