import * as z from 'zod/mini'
import type { RouteDoc } from '#shared/http/openapi'
import {
  AnnotationQueueSchema,
  ProgressBodySchema,
  QueueAddCallsBodySchema,
  QueueCreateReqSchema,
  QueueItemsQueryBodySchema,
  QueueProjectQuerySchema,
  QueuesQueryReqSchema,
  QueuesStatsReqSchema,
  QueueUpdateBodySchema,
} from '#shared/schemas/annotation-queue'
import {
  FeedbackBatchCreateReqSchema,
  FeedbackCreateReqSchema,
  FeedbackPurgeReqSchema,
  FeedbackQueryReqSchema,
  FeedbackReplaceReqSchema,
} from '#shared/schemas/feedback'
import { FeedbackPayloadSchemaReqSchema, FeedbackStatsReqSchema } from '#shared/schemas/feedback-stats'
import {
  ObjCreateReqSchema,
  ObjDeleteReqSchema,
  ObjOutSchema,
  ObjQueryReqSchema,
  ObjReadReqSchema,
  ObjRemoveAliasesBodySchema,
  ObjSetAliasesBodySchema,
  ObjTagsBodySchema,
  ProjectQuerySchema,
} from '#shared/schemas/obj'
import { FileContentReqSchema, TableCreateReqSchema, TableQueryReqSchema } from '#shared/schemas/table'

const Empty = z.object({})
const FeedbackCreateRes = z.object({
  id: z.string(),
  created_at: z.string(),
  wb_user_id: z.string(),
  payload: z.record(z.string(), z.unknown()),
})
const QueueRes = z.object({ queue: AnnotationQueueSchema })
const ItemRes = z.record(z.string(), z.unknown())

/** OpenAPI descriptions of the tracing object, table, file, feedback and annotation-queue routes. */
export const TRACING_OBJECTS_DOCS: Record<string, RouteDoc> = {
  'POST /obj/create': {
    summary: 'Publish an object version',
    body: ObjCreateReqSchema,
    response: z.object({ digest: z.string(), object_id: z.nullable(z.string()) }),
  },
  'POST /obj/read': {
    summary: 'Read an object version',
    body: ObjReadReqSchema,
    response: z.object({ obj: ObjOutSchema }),
  },
  'POST /objs/query': {
    summary: 'Query object versions',
    body: ObjQueryReqSchema,
    response: z.object({ objs: z.array(ObjOutSchema) }),
  },
  'POST /obj/delete': {
    summary: 'Soft-delete object versions',
    body: ObjDeleteReqSchema,
    response: z.object({
      num_deleted: z.number(),
      deleted_versions: z.array(
        z.object({
          digest: z.string(),
          base_object_class: z.nullable(z.string()),
          leaf_object_class: z.nullable(z.string()),
        }),
      ),
    }),
  },
  'PUT /objs/:object_id/versions/:digest/tags': {
    summary: 'Tag an object version',
    body: ObjTagsBodySchema,
    response: Empty,
  },
  'POST /objs/:object_id/versions/:digest/tags/remove': {
    summary: 'Remove tags from an object version',
    body: ObjTagsBodySchema,
    response: Empty,
  },
  'PUT /objs/:object_id/aliases': {
    summary: 'Point aliases at an object version',
    body: ObjSetAliasesBodySchema,
    response: Empty,
  },
  'POST /objs/:object_id/aliases/remove': {
    summary: 'Remove aliases of an object',
    body: ObjRemoveAliasesBodySchema,
    response: Empty,
  },
  'GET /tags': {
    summary: 'Tags used in a project',
    query: ProjectQuerySchema,
    response: z.object({ tags: z.array(z.string()) }),
  },
  'GET /aliases': {
    summary: 'Aliases used in a project',
    query: ProjectQuerySchema,
    response: z.object({ aliases: z.array(z.string()) }),
  },
  'POST /table/create': {
    summary: 'Store a table of rows',
    body: TableCreateReqSchema,
    response: z.object({ digest: z.string(), row_digests: z.array(z.string()) }),
  },
  'POST /table/query': { summary: 'Read rows of a table', body: TableQueryReqSchema },
  'POST /file/create': {
    summary: 'Upload a file (multipart: project_id, file, expected_digest?)',
    response: z.object({ digest: z.string() }),
  },
  'POST /files/create': { summary: 'Alias of /file/create', response: z.object({ digest: z.string() }) },
  'POST /file/content': {
    summary: 'Download a file',
    body: FileContentReqSchema,
    responseMediaType: 'application/octet-stream',
  },
  'POST /files/content': {
    summary: 'Alias of /file/content',
    body: FileContentReqSchema,
    responseMediaType: 'application/octet-stream',
  },
  'POST /feedback/create': { summary: 'Record feedback', body: FeedbackCreateReqSchema, response: FeedbackCreateRes },
  'POST /feedback/batch/create': {
    summary: 'Record several feedback rows',
    body: FeedbackBatchCreateReqSchema,
    response: z.object({ res: z.array(FeedbackCreateRes) }),
  },
  'POST /feedback/query': {
    summary: 'Query feedback',
    body: FeedbackQueryReqSchema,
    response: z.object({ result: z.array(z.record(z.string(), z.unknown())), total_count: z.number() }),
  },
  'POST /feedback/purge': { summary: 'Delete feedback by id', body: FeedbackPurgeReqSchema, response: Empty },
  'POST /feedback/replace': {
    summary: 'Replace a feedback row',
    body: FeedbackReplaceReqSchema,
    response: FeedbackCreateRes,
  },
  'POST /feedback/stats': { summary: 'Time-bucketed feedback statistics', body: FeedbackStatsReqSchema },
  'POST /feedback/payload_schema': {
    summary: 'Leaf paths and value types of recent feedback payloads',
    body: FeedbackPayloadSchemaReqSchema,
    response: z.object({ paths: z.array(z.object({ json_path: z.string(), value_type: z.string() })) }),
  },
  'POST /annotation_queues': {
    summary: 'Create an annotation queue',
    body: QueueCreateReqSchema,
    response: z.object({ id: z.string() }),
  },
  'POST /annotation_queues/query': {
    summary: 'Query annotation queues',
    body: QueuesQueryReqSchema,
    responseMediaType: 'application/jsonl',
  },
  'GET /annotation_queues/:queue_id': {
    summary: 'Read an annotation queue',
    query: QueueProjectQuerySchema,
    response: QueueRes,
  },
  'PUT /annotation_queues/:queue_id': {
    summary: 'Update an annotation queue',
    body: QueueUpdateBodySchema,
    response: QueueRes,
  },
  'DELETE /annotation_queues/:queue_id': {
    summary: 'Delete an annotation queue',
    query: QueueProjectQuerySchema,
    response: QueueRes,
  },
  'POST /annotation_queues/:queue_id/items': {
    summary: 'Add calls to an annotation queue',
    body: QueueAddCallsBodySchema,
    response: z.object({ added_count: z.number(), duplicates: z.number() }),
  },
  'POST /annotation_queues/:queue_id/items/query': {
    summary: 'Query the items of an annotation queue',
    body: QueueItemsQueryBodySchema,
    response: z.object({ items: z.array(ItemRes) }),
  },
  'POST /annotation_queues/stats': {
    summary: 'Item counts per annotation queue',
    body: QueuesStatsReqSchema,
    response: z.object({
      stats: z.array(z.object({ queue_id: z.string(), total_items: z.number(), completed_items: z.number() })),
    }),
  },
  'POST /annotation_queues/:queue_id/items/:item_id/progress': {
    summary: "Set the caller's annotation state of a queue item",
    body: ProgressBodySchema,
    response: z.object({ item: ItemRes }),
  },
}
