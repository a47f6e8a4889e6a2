import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb'
import { getBatch } from '#shared/db/batch-write'
import { db, table } from '#shared/db/client'
import { ifConditionHolds } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { keyPart } from '#shared/db/key-part'
import { objPk } from '#shared/db/obj-repository'
import { queryAll } from '#shared/db/query'
import { LABEL_ATTRIBUTES, LATEST_ALIAS_ATTRIBUTES } from '#shared/db/table'

// Aliases and tags of object versions (layout in obj-repository.ts): rows in the object's partition, with project-wide
// indexes GSI1 ALIASES#<project> / TAGS#<project> and GSI2 LATEST#<project> for the `latest` aliases.

/** One alias row of an object. */
export type AliasRow = { alias: string; digest: string }

/** Options of alias writes. */
export type AliasWriteOptions = {
  /** Write only while the alias still names this digest (a cleanup that must not undo a newer move). */
  ifDigest?: string
}

// The condition of an alias write; a failed one means the alias moved meanwhile, and the write is skipped.
function aliasCondition(options: AliasWriteOptions) {
  return options.ifDigest === undefined
    ? {}
    : { ConditionExpression: 'digest = :expected', ExpressionAttributeValues: { ':expected': options.ifDigest } }
}

/** Points an alias of an object at a digest (moving it if it pointed elsewhere). */
export async function putAlias(
  project: string,
  objectId: string,
  alias: string,
  digest: string,
  options: AliasWriteOptions = {},
): Promise<void> {
  const index =
    alias === 'latest'
      ? { GSI2PK: `LATEST#${keyPart(project)}`, GSI2SK: objectId }
      : { GSI1PK: `ALIASES#${keyPart(project)}`, GSI1SK: `${keyPart(alias)}#${keyPart(objectId)}` }
  await ifConditionHolds(
    db().send(
      new PutCommand({
        TableName: table(),
        Item: {
          PK: objPk(project, objectId),
          SK: `ALIAS#${keyPart(alias)}`,
          project_id: project,
          object_id: objectId,
          alias,
          digest,
          ...index,
        },
        ...aliasCondition(options),
      }),
    ),
  )
}

/** Removes an alias of an object (no-op when absent). */
export async function deleteAlias(
  project: string,
  objectId: string,
  alias: string,
  options: AliasWriteOptions = {},
): Promise<void> {
  await ifConditionHolds(
    db().send(
      new DeleteCommand({
        TableName: table(),
        Key: { PK: objPk(project, objectId), SK: `ALIAS#${keyPart(alias)}` },
        ...aliasCondition(options),
      }),
    ),
  )
}

/** The digest an alias of an object points at. */
export async function getAlias(project: string, objectId: string, alias: string): Promise<string | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: table(),
      Key: { PK: objPk(project, objectId), SK: `ALIAS#${keyPart(alias)}` },
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
    const keys = ids.slice(i, i + 100).map((id) => ({ PK: objPk(project, id), SK: 'ALIAS#latest' }))
    for (const item of await getBatch(keys, { ConsistentRead: true })) {
      out.set(String(item.object_id), String(item.digest))
    }
  }
  return out
}

/** Every `latest` alias of a project (GSI2: one row per object). */
export async function listLatestAliases(project: string): Promise<Map<string, string>> {
  const items = await queryIndexAll(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk',
      ExpressionAttributeValues: { ':pk': `LATEST#${keyPart(project)}` },
    },
    LATEST_ALIAS_ATTRIBUTES,
  )
  return new Map(items.map((item) => [String(item.object_id), String(item.digest)]))
}

/** Whether any object of a project has a `latest` alias (one row read). */
export async function hasLatestAlias(project: string): Promise<boolean> {
  const page = await db().send(
    new QueryCommand({
      TableName: table(),
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk',
      ExpressionAttributeValues: { ':pk': `LATEST#${keyPart(project)}` },
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
        SK: `TAG#${keyPart(digest)}#${tag}`,
        GSI1PK: `TAGS#${keyPart(project)}`,
        GSI1SK: `${tag}#${keyPart(objectId)}#${keyPart(digest)}`,
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
    new DeleteCommand({
      TableName: table(),
      Key: { PK: objPk(project, objectId), SK: `TAG#${keyPart(digest)}#${tag}` },
    }),
  )
}

/** `(object_id, digest)` pairs carrying a tag, from the project's tag index. */
export async function listTaggedVersions(
  project: string,
  tag: string,
): Promise<{ objectId: string; digest: string }[]> {
  const items = await queryIndexAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
      ExpressionAttributeValues: { ':pk': `TAGS#${keyPart(project)}`, ':sk': `${tag}#` },
    },
    LABEL_ATTRIBUTES,
  )
  return items.filter((i) => i.tag === tag).map((i) => ({ objectId: String(i.object_id), digest: String(i.digest) }))
}

/** `(object_id, digest)` pairs an alias names, from the project's alias index. */
export async function listAliasedVersions(
  project: string,
  alias: string,
): Promise<{ objectId: string; digest: string }[]> {
  const items = await queryIndexAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ALIASES#${keyPart(project)}`, ':sk': `${keyPart(alias)}#` },
    },
    LABEL_ATTRIBUTES,
  )
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
