import * as z from 'zod/mini'
import { AnnotationQueueSchema } from '#shared/schemas/annotation-queue'

const ItemResSchema = z.record(z.string(), z.unknown())

/** `POST /annotation_queues` answer. */
export const QueueCreateResSchema = z.object({ id: z.string() })
export type QueueCreateRes = z.infer<typeof QueueCreateResSchema>

/** `GET`, `PUT` and `DELETE /annotation_queues/{queue_id}` answer. */
export const QueueResSchema = z.object({ queue: AnnotationQueueSchema })
export type QueueRes = z.infer<typeof QueueResSchema>

/** `POST /annotation_queues/{queue_id}/items` answer. */
export const QueueAddCallsResSchema = z.object({ added_count: z.number(), duplicates: z.number() })
export type QueueAddCallsRes = z.infer<typeof QueueAddCallsResSchema>

/** `POST /annotation_queues/{queue_id}/items/query` answer. */
export const QueueItemsQueryResSchema = z.object({ items: z.array(ItemResSchema) })
export type QueueItemsQueryRes = z.infer<typeof QueueItemsQueryResSchema>

/** `POST /annotation_queues/stats` answer. */
export const QueuesStatsResSchema = z.object({
  stats: z.array(z.object({ queue_id: z.string(), total_items: z.number(), completed_items: z.number() })),
})
export type QueuesStatsRes = z.infer<typeof QueuesStatsResSchema>

/** `POST /annotation_queues/{queue_id}/items/{item_id}/progress` answer. */
export const ProgressResSchema = z.object({ item: ItemResSchema })
export type ProgressRes = z.infer<typeof ProgressResSchema>
