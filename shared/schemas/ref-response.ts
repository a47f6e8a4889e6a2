import * as z from 'zod/mini'

/** `POST /refs/read_batch` answer: one value per requested ref, in order (null for a deleted object or a missing path). */
export const RefsReadBatchResSchema = z.object({ vals: z.array(z.unknown()) })
export type RefsReadBatchRes = z.infer<typeof RefsReadBatchResSchema>
