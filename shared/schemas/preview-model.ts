import * as z from 'zod/mini'
import { NameSchema } from '#shared/schemas/api-key'

// A project is named as a tracing project is (W&B's rule: no `/ \\ # ? % :` or control characters), which
// `registerModel` and `listModels` check with `projectNameProblem` (shared/auth/authenticate.ts): the manifest reads
// these schemas and may not import shared/auth/ (test/infra/manifest-imports.test.ts).
const ProjectSchema = z.string()

/** Body of `POST /v1/preview/models` (ART `Models.create`); a null entity means the key's own entity. */
export const CreatePreviewModelReqSchema = z.looseObject({
  entity: z.optional(z.nullable(NameSchema)),
  project: ProjectSchema,
  name: NameSchema,
  base_model: z.string().check(z.minLength(1)),
  return_existing: z.optional(z.boolean()),
})
export type CreatePreviewModelReq = z.infer<typeof CreatePreviewModelReqSchema>

/** A stored preview model: what the API returns plus its creation time and current training step. */
export const PreviewModelSchema = z.object({
  id: z.string(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.nullable(z.string()),
  created_at: z.string(),
  /** The model's current training step (newest checkpoint's step; 0 until one exists). */
  step: z.int(),
})
export type PreviewModel = z.infer<typeof PreviewModelSchema>

/** Query of `GET /v1/preview/models`. */
export const ListPreviewModelsQuerySchema = z.object({
  entity: z.optional(NameSchema),
  project: z.optional(ProjectSchema),
})

/** The public view of a model (ART's `Model`: `{id, entity, project, name, base_model, run_id}`). */
export const PreviewModelViewSchema = z.object({
  id: z.string(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.nullable(z.string()),
})
export type PreviewModelView = z.infer<typeof PreviewModelViewSchema>

/** Answer of `GET /v1/preview/models`. */
export const ListPreviewModelsResSchema = z.object({ data: z.array(PreviewModelViewSchema) })

/** Answer of `DELETE /v1/preview/models/{model_id}`. */
export const DeletePreviewModelResSchema = z.object({ id: z.string(), deleted: z.literal(true) })

/** The public view of a stored model. */
export function toModelView(model: PreviewModel): PreviewModelView {
  return {
    id: model.id,
    entity: model.entity,
    project: model.project,
    name: model.name,
    base_model: model.base_model,
    run_id: model.run_id,
  }
}
