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
