import * as z from 'zod/mini'

/** A JSON value as stored in a call item: inline text or a ref to large-value chunks. */
export const StoredJsonSchema = z.union([
  z.object({ json: z.string() }),
  z.object({ ref: z.object({ hash: z.string(), chunks: z.number(), bytes: z.number() }) }),
])

const opt = z.optional(z.string())

/** The stored start part of a call (item `SK = S`). */
export const CallStartItemSchema = z.object({
  project_id: z.string(),
  id: z.string(),
  op_name: z.string(),
  display_name: opt,
  trace_id: z.string(),
  parent_id: opt,
  thread_id: opt,
  turn_id: opt,
  started_at: z.string(),
  // The large JSON columns are absent from lean reads (projections that skip them); they read as empty then.
  attributes: z.optional(StoredJsonSchema),
  inputs: z.optional(StoredJsonSchema),
  otel_dump: z.optional(StoredJsonSchema),
  wb_user_id: opt,
  wb_run_id: opt,
  wb_run_step: z.optional(z.number()),
  input_refs: z.optional(z.array(z.string())),
  size: z.number(),
  deleted_at: opt,
  // The deleting request's id, set with `deleted_at` and removed once the call counter shows the deletion.
  uncount_pending: opt,
})
export type CallStartItem = z.infer<typeof CallStartItemSchema>

/** The stored end part of a call (item `SK = E`). */
export const CallEndItemSchema = z.object({
  project_id: z.string(),
  id: z.string(),
  ended_at: z.string(),
  // The text, or a ref to the chunks of its JSON text when it is longer than a column kept inline.
  exception: z.optional(z.union([z.string(), StoredJsonSchema])),
  output: z.optional(StoredJsonSchema),
  summary: StoredJsonSchema,
  trace_id: opt,
  wb_run_step_end: z.optional(z.number()),
  output_refs: z.optional(z.array(z.string())),
  size: z.number(),
})
export type CallEndItem = z.infer<typeof CallEndItemSchema>

/**
 * Both stored parts of one call; either may be missing (an end may arrive before its start). `pendingDisplayName`:
 * a `call/update` that came before the start (item `SK = U`; '' clears), read only by ingest when asked for.
 */
export type CallParts = { start?: CallStartItem; end?: CallEndItem; pendingDisplayName?: string }
