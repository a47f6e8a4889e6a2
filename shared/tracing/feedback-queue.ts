import { getQueue } from '#shared/db/queue-repository'
import { BadRequestError } from '#shared/errors/http-error'

/** Feedback may name an annotation queue only while the queue is live (docs/tracing.md §11.1). */
export async function assertQueueLive(project: string, queueId: string): Promise<void> {
  const queue = await getQueue(project, queueId)
  if (queue === undefined || queue.deleted_at != null)
    throw new BadRequestError(`Queue ${queueId} not found or has been deleted`)
}
