import * as z from 'zod/mini'

/** A model as `GET /v1/models` lists it (docs/inference.md §10), vLLM's model card. */
export const ModelCardSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number(),
  owned_by: z.string(),
  root: z.string(),
  parent: z.null(),
  // The window the model enforces (`maxModelLenOf`): null for an upstream model whose entry sets no `maxModelLen`.
  max_model_len: z.nullable(z.number()),
})
export type ModelCard = z.infer<typeof ModelCardSchema>

/** `GET /v1/models` answer. */
export const ModelListResSchema = z.object({ object: z.literal('list'), data: z.array(ModelCardSchema) })
export type ModelListRes = z.infer<typeof ModelListResSchema>
