import { maxModelLenOf } from '#shared/engine/settings'
import type { CatalogModel } from '#shared/schemas/model'
import type { ModelCard } from '#shared/schemas/model-response'

/**
 * A model as `GET /v1/models` lists it (docs/inference.md §10): W&B's defaults where the catalog entry leaves a field
 * out.
 */
export function modelCard(model: CatalogModel): ModelCard {
  return {
    id: model.id,
    object: 'model' as const,
    created: model.created ?? 0,
    owned_by: model.ownedBy ?? 'system',
    root: model.root ?? model.id,
    parent: null,
    // The number the model enforces (the reference engine's default when the entry sets none), as vLLM's card does.
    max_model_len: maxModelLenOf(model),
  }
}
