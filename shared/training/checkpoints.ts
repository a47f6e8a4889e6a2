import type { Principal } from '#shared/schemas/api-key'
import type { CheckpointPage, DeleteCheckpointsRes } from '#shared/schemas/checkpoint'
import { findModel } from '#shared/training/preview-models'

// Loom logs trajectories but does not train, so no model has a checkpoint (docs/training.md §6): the list is always
// empty, which ART reads as step 0 (`_get_step` returns the first listed checkpoint's step, else 0), and a delete finds
// none of the steps. Both still answer 404 for a model the caller cannot see, as every model route does.

/** The caller's model's checkpoints, newest or oldest first: none. */
export async function listCheckpoints(principal: Principal, modelId: string): Promise<CheckpointPage> {
  await findModel(principal, modelId)
  return { data: [], has_more: false }
}

/** Deletes checkpoints of the caller's model by step: every step is reported as not found. */
export async function deleteCheckpoints(
  principal: Principal,
  modelId: string,
  steps: readonly number[],
): Promise<DeleteCheckpointsRes> {
  await findModel(principal, modelId)
  return { deleted_count: 0, not_found_steps: [...steps] }
}
