import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { ifConditionHolds, putIfAbsent, putIfAbsentOrRead, updateIfExists } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { assertItemFits } from '#shared/db/item-size'
import { keyPart } from '#shared/db/key-part'
import { type PreviewModel, PreviewModelSchema } from '#shared/schemas/preview-model'

// Model: PK=PMODEL#<id> SK=PMODEL, GSI1PK=PMODELS#<entity> GSI1SK=<project>#<name> (list an entity's models).
// Name claim: PK=PMODELNAME#<entity>/<project>/<name> SK=PMODELNAME, a full copy of the model plus the creating
// request's digest (`request_digest`), written first with a condition so two creates of one name can never yield two
// ids; the by-id item is re-derived from it on retry.
const modelKey = (id: string) => ({ PK: `PMODEL#${id}`, SK: 'PMODEL' })
const MAX_ID_BYTES = 1_024
// Names are not length-capped: a long entity, project or name enters the keys as a digest (keyPart; DynamoDB caps
// partition keys at 2,048 bytes and sort keys at 1,024), the item keeps it whole.
const nameKey = (m: Pick<PreviewModel, 'entity' | 'project' | 'name'>) => ({
  PK: `PMODELNAME#${keyPart(m.entity)}/${keyPart(m.project)}/${keyPart(m.name)}`,
  SK: 'PMODELNAME',
})
const modelItem = (model: PreviewModel) => ({
  ...modelKey(model.id),
  GSI1PK: `PMODELS#${keyPart(model.entity)}`,
  GSI1SK: `${keyPart(model.project)}#${keyPart(model.name)}`,
  ...fields(model),
})
const claimItem = (model: PreviewModel, requestDigest: string) => ({
  ...nameKey(model),
  ...fields(model),
  request_digest: requestDigest,
})

function parse(item: Record<string, unknown>): PreviewModel {
  return PreviewModelSchema.parse(item)
}

function fields(model: PreviewModel): PreviewModel {
  return PreviewModelSchema.parse(model)
}

// True when this call wrote the by-id item, i.e. the model was not visible before.
async function putModelItem(model: PreviewModel): Promise<boolean> {
  // 'exists': already written by an earlier attempt; the claim is the source of truth, so nothing to do.
  return (await putIfAbsent(modelItem(model))) === 'written'
}

/** Throws the 4xx (400 for a key, 413 for size) for a model DynamoDB could not store; nothing is written. */
export function assertPreviewModelFits(model: PreviewModel, requestDigest: string): void {
  assertItemFits(claimItem(model, requestDigest), 'model')
  assertItemFits(modelItem(model), 'model')
}

/**
 * Creates a model unless its `(entity, project, name)` is taken; returns the stored model and whether it is new.
 * Safe to retry: a half-finished earlier create is completed. `requestDigest` identifies the creating request (stored
 * on the claim): a create that meets a claim is still `created` when the claim is its own (its put's answer was lost
 * and the retried put met it), or was made by a request with the same digest whose model this call made visible (an
 * earlier attempt that failed after claiming the name).
 */
export async function createPreviewModel(
  model: PreviewModel,
  requestDigest: string,
): Promise<{ model: PreviewModel; created: boolean }> {
  const claim = await putIfAbsentOrRead(claimItem(model, requestDigest), async () => {
    const { Item } = await db().send(new GetCommand({ TableName: table(), Key: nameKey(model), ConsistentRead: true }))
    return Item
  })
  if (claim.written) {
    await putModelItem(model)
    return { model, created: true }
  }
  const existing = parse(claim.existing)
  const completed = await putModelItem(existing)
  const created = existing.id === model.id || (completed && claim.existing.request_digest === requestDigest)
  return { model: existing, created }
}

/** Reads a model by id; undefined when unknown or deleted. */
export async function getPreviewModel(id: string): Promise<PreviewModel | undefined> {
  // Ids are UUIDs; one too long for a partition key (2,048 bytes) names no model rather than failing the read.
  if (Buffer.byteLength(id) > MAX_ID_BYTES) return undefined
  const { Item } = await db().send(new GetCommand({ TableName: table(), Key: modelKey(id), ConsistentRead: true }))
  return Item === undefined ? undefined : parse(Item)
}

/** Lists an entity's models (optionally one project's), ordered by project and name. */
export async function listPreviewModels(entity: string, project?: string): Promise<PreviewModel[]> {
  const items = await queryIndexAll({
    IndexName: 'GSI1',
    KeyConditionExpression: project === undefined ? 'GSI1PK = :pk' : 'GSI1PK = :pk AND begins_with(GSI1SK, :project)',
    ExpressionAttributeValues: {
      ':pk': `PMODELS#${keyPart(entity)}`,
      ...(project === undefined ? {} : { ':project': `${keyPart(project)}#` }),
    },
  })
  return items.map(parse)
}

/** Deletes a model and frees its name (idempotent); its logged trajectories and history stay stored. */
export async function deletePreviewModel(model: PreviewModel): Promise<void> {
  // Name first: were the by-id item deleted first, a crash in between would let a `return_existing` create revive it
  // from the claim. Only free the name if it still points at this model.
  await ifConditionHolds(
    db().send(
      new DeleteCommand({
        TableName: table(),
        Key: nameKey(model),
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': model.id },
      }),
    ),
  )
  await db().send(new DeleteCommand({ TableName: table(), Key: modelKey(model.id) }))
}

/** Sets a model's current training step (written when a checkpoint is recorded); false when the model is unknown. */
export async function setPreviewModelStep(id: string, step: number): Promise<boolean> {
  const out = await updateIfExists({
    Key: modelKey(id),
    UpdateExpression: 'SET step = :step',
    ExpressionAttributeValues: { ':step': step },
  })
  return out !== undefined
}
