import { createHash, randomUUID } from 'node:crypto'
import { assertProjectAccess, projectNameProblem } from '#shared/auth/authenticate'
import {
  assertPreviewModelFits,
  createPreviewModel,
  deletePreviewModel,
  getPreviewModel,
  listPreviewModels,
} from '#shared/db/preview-model-repository'
import { registerProject } from '#shared/db/project-repository'
import { ConflictError, ForbiddenError, NotFoundError, RequestValidationError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { CreatePreviewModelReq, PreviewModel } from '#shared/schemas/preview-model'

// A model's project is a tracing project (`registerModel` registers it as one), so it is named by the same rule: the
// family's 422 at the field's location, as a pydantic validator's `ValueError` would answer.
function assertProjectName(project: string, loc: (string | number)[]): void {
  const problem = projectNameProblem(project)
  if (problem !== undefined) {
    throw new RequestValidationError([{ type: 'value_error', loc, msg: `Value error, ${problem}`, input: project }])
  }
}

/**
 * Creates a preview model in one of the caller's entities (the key's own when `entity` is null). An existing
 * `(entity, project, name)` is returned when `return_existing` is set (ART's `register()`), else it is a 409 — except
 * for this request's own retry: a lost answer, or the same caller's same body after an attempt that failed once the
 * name was claimed but before the model was visible, is answered as created.
 */
export async function registerModel(
  principal: Principal,
  req: CreatePreviewModelReq,
  now = new Date(),
): Promise<{ model: PreviewModel; created: boolean }> {
  assertProjectName(req.project, ['body', 'project'])
  const entity = req.entity ?? principal.entity
  assertProjectAccess(principal, `${entity}/${req.project}`)
  const candidate: PreviewModel = {
    id: randomUUID(),
    entity,
    project: req.project,
    name: req.name,
    base_model: req.base_model,
    run_id: null,
    created_at: now.toISOString(),
    step: 0,
  }
  // The same caller sending the same body: the only sign of a retry, as the client sends no idempotency key.
  const requestDigest = createHash('sha256')
    .update(JSON.stringify([principal.userId, entity, req.project, req.name, req.base_model]))
    .digest('base64url')
  assertPreviewModelFits(candidate, requestDigest)
  const result = await createPreviewModel(candidate, requestDigest)
  await registerProject(`${entity}/${req.project}`)
  if (!result.created && req.return_existing !== true) {
    throw new ConflictError(`Model '${entity}/${req.project}/${req.name}' already exists`)
  }
  return result
}

/** The model with this id if the caller may see it; a foreign or unknown model is the same 404. */
export async function findModel(principal: Principal, modelId: string): Promise<PreviewModel> {
  const model = await getPreviewModel(modelId)
  if (model === undefined || !principal.entities.includes(model.entity)) {
    throw new NotFoundError(`Model '${modelId}' not found`)
  }
  return model
}

/** Lists the models of the caller's entities (or of one of them, optionally one project). */
export async function listModels(
  principal: Principal,
  filter: { entity?: string | undefined; project?: string | undefined },
): Promise<PreviewModel[]> {
  if (filter.project !== undefined) assertProjectName(filter.project, ['query', 'project'])
  if (filter.entity !== undefined && !principal.entities.includes(filter.entity)) {
    throw new ForbiddenError(`You do not have access to entity '${filter.entity}'`)
  }
  const entities = filter.entity === undefined ? principal.entities : [filter.entity]
  const lists = await Promise.all(entities.map((entity) => listPreviewModels(entity, filter.project)))
  return lists.flat()
}

/** Deletes one of the caller's models; 404 when unknown or foreign. */
export async function removeModel(principal: Principal, modelId: string): Promise<PreviewModel> {
  const model = await findModel(principal, modelId)
  await deletePreviewModel(model)
  return model
}
