import * as z from 'zod/mini'
import { SortBySchema } from '#shared/schemas/obj'
import { LaxIntSchema } from '#shared/schemas/pydantic-lax'

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

/** `FileContentReq`. */
export const FileContentReqSchema = z.looseObject({ project_id: z.string(), digest: z.string() })
export type FileContentReq = z.infer<typeof FileContentReqSchema>
