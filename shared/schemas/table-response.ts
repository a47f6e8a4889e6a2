import * as z from 'zod/mini'

/** `POST /table/create` answer. */
export const TableCreateResSchema = z.object({ digest: z.string(), row_digests: z.array(z.string()) })
export type TableCreateRes = z.infer<typeof TableCreateResSchema>

/** `POST /file/create` answer. */
export const FileCreateResSchema = z.object({ digest: z.string() })
export type FileCreateRes = z.infer<typeof FileCreateResSchema>

/** `POST /table/query` answer: rows with their digests and their index in the stored table. */
export const TableQueryResSchema = z.object({
  rows: z.array(z.object({ digest: z.string(), val: z.unknown(), original_index: z.number() })),
})
export type TableQueryRes = z.infer<typeof TableQueryResSchema>

/** `POST /table/update` answer: the new table and, per update, the row appended, popped or inserted. */
export const TableUpdateResSchema = z.object({ digest: z.string(), updated_row_digests: z.array(z.string()) })
export type TableUpdateRes = z.infer<typeof TableUpdateResSchema>

/** `POST /table/create_from_digests` answer. */
export const TableCreateFromDigestsResSchema = z.object({ digest: z.string() })
export type TableCreateFromDigestsRes = z.infer<typeof TableCreateFromDigestsResSchema>

/** `POST /table/query_stats` answer: the table's row count. */
export const TableQueryStatsResSchema = z.object({ count: z.number() })
export type TableQueryStatsRes = z.infer<typeof TableQueryStatsResSchema>

/** One table of `POST /table/query_stats_batch`: `storage_size_bytes` is null unless `include_storage_size`. */
export const TableStatsRowSchema = z.object({
  count: z.number(),
  digest: z.string(),
  storage_size_bytes: z.nullable(z.number()),
})
export type TableStatsRow = z.infer<typeof TableStatsRowSchema>

/** `POST /table/query_stats_batch` answer: the known tables among the digests asked for. */
export const TableQueryStatsBatchResSchema = z.object({ tables: z.array(TableStatsRowSchema) })
export type TableQueryStatsBatchRes = z.infer<typeof TableQueryStatsBatchResSchema>
