import * as z from 'zod/mini'
import { SortBySchema } from '#shared/schemas/obj'
import { LaxBoolSchema, LaxIntSchema } from '#shared/schemas/pydantic-lax'

/** `TableCreateReq`: rows are checked to be objects by the server (400), as Weave does. */
export const TableCreateReqSchema = z.looseObject({
  table: z.looseObject({
    project_id: z.string(),
    rows: z.array(z.unknown()),
    expected_digest: z.optional(z.nullable(z.string())),
  }),
})
export type TableCreateReq = z.infer<typeof TableCreateReqSchema>

/** `TableQueryReq`. */
export const TableQueryReqSchema = z.looseObject({
  project_id: z.string(),
  digest: z.string(),
  filter: z.optional(z.nullable(z.looseObject({ row_digests: z.optional(z.nullable(z.array(z.string()))) }))),
  limit: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  offset: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
})
export type TableQueryReq = z.infer<typeof TableQueryReqSchema>

// `dict[str, Any]`: a JSON object (pydantic refuses lists and scalars with 422).
const RowSchema = z.record(z.string(), z.unknown())

// The specs are pydantic `BaseModel`s in a plain union: the first that validates is taken (append, pop, insert, as
// the server's `isinstance` checks), and keys of the other operations are dropped, not kept.
const TableAppendSpecSchema = z.object({ append: z.object({ row: RowSchema }) })
const TablePopSpecSchema = z.object({ pop: z.object({ index: LaxIntSchema }) })
const TableInsertSpecSchema = z.object({ insert: z.object({ index: LaxIntSchema, row: RowSchema }) })

/** `TableUpdateReq`: `updates` apply in order to the rows of `base_digest`; indexes are checked by the server (400). */
export const TableUpdateReqSchema = z.looseObject({
  project_id: z.string(),
  base_digest: z.string(),
  updates: z.array(z.union([TableAppendSpecSchema, TablePopSpecSchema, TableInsertSpecSchema])),
})
export type TableUpdateReq = z.infer<typeof TableUpdateReqSchema>

/** `TableCreateFromDigestsReq`: a table of rows already stored in the project, named by their digests. */
export const TableCreateFromDigestsReqSchema = z.looseObject({
  project_id: z.string(),
  row_digests: z.array(z.string()),
  expected_digest: z.optional(z.nullable(z.string())),
})
export type TableCreateFromDigestsReq = z.infer<typeof TableCreateFromDigestsReqSchema>

/** `TableQueryStatsReq` (newest: no `include_storage_size`; the batch route has it). */
export const TableQueryStatsReqSchema = z.looseObject({ project_id: z.string(), digest: z.string() })
export type TableQueryStatsReq = z.infer<typeof TableQueryStatsReqSchema>

/** `TableQueryStatsBatchReq`: `digests` defaults to none. */
export const TableQueryStatsBatchReqSchema = z.looseObject({
  project_id: z.string(),
  digests: z.optional(z.nullable(z.array(z.string()))),
  include_storage_size: z._default(z.nullable(LaxBoolSchema), false),
})
export type TableQueryStatsBatchReq = z.infer<typeof TableQueryStatsBatchReqSchema>

/** `FileContentReq`. */
export const FileContentReqSchema = z.looseObject({ project_id: z.string(), digest: z.string() })
export type FileContentReq = z.infer<typeof FileContentReqSchema>
