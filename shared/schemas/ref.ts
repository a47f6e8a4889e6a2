import * as z from 'zod/mini'

/** `RefsReadBatchReq`: `weave:///` refs to resolve, answered in the same order (docs/tracing.md, `refs/read_batch`). */
export const RefsReadBatchReqSchema = z.looseObject({ refs: z.array(z.string()) })
export type RefsReadBatchReq = z.infer<typeof RefsReadBatchReqSchema>
