import * as z from 'zod/mini'

/** The `{}` answer of a write that returns nothing (call end, tags, aliases, purges). */
export const EmptyResSchema = z.object({})
export type EmptyRes = z.infer<typeof EmptyResSchema>
