import * as z from 'zod/mini'
import type { RouteDoc } from '#shared/http/openapi'
import {
  CallCreateBatchReqSchema,
  CallEndReqSchema,
  CallReadReqSchema,
  CallStartReqSchema,
  CallsDeleteReqSchema,
  CallsQueryReqSchema,
  CallsQueryStatsReqSchema,
  CallsUsageReqSchema,
  CallUpdateReqSchema,
  TraceUsageReqSchema,
} from '#shared/schemas/call'
import { CostCreateReqSchema, CostPurgeReqSchema, CostQueryReqSchema } from '#shared/schemas/cost'

const CallStartResSchema = z.object({ id: z.string(), trace_id: z.string() })
const EmptySchema = z.object({})
const UsageResSchema = z.object({
  call_usage: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.nullable(z.number())))),
  unfinished_call_ids: z.array(z.string()),
})

/** OpenAPI descriptions of the tracing calls, usage and cost routes (merged into `ROUTE_DOCS`). */
export const TRACING_CALLS_DOCS: Record<string, RouteDoc> = {
  'GET /server_info': {
    summary: 'Supported Weave client versions',
    response: z.object({ min_required_weave_python_version: z.string(), trace_server_version: z.nullable(z.string()) }),
  },
  'POST /call/start': { summary: 'Start a call', body: CallStartReqSchema, response: CallStartResSchema },
  'POST /call/end': { summary: 'End a call', body: CallEndReqSchema, response: EmptySchema },
  'POST /call/upsert_batch': {
    summary: 'Write call starts and ends in order',
    body: CallCreateBatchReqSchema,
    response: z.object({ res: z.array(z.union([CallStartResSchema, EmptySchema])) }),
  },
  'POST /call/read': { summary: 'Read one call', body: CallReadReqSchema },
  'POST /call/update': { summary: "Update a call's display name", body: CallUpdateReqSchema, response: EmptySchema },
  'POST /calls/delete': {
    summary: 'Soft-delete calls and their descendants',
    body: CallsDeleteReqSchema,
    response: z.object({ num_deleted: z.number() }),
  },
  'POST /calls/stream_query': {
    summary: 'Query calls (JSON Lines)',
    body: CallsQueryReqSchema,
    responseMediaType: 'application/jsonl',
  },
  'POST /calls/query_stats': {
    summary: 'Count calls',
    body: CallsQueryStatsReqSchema,
    response: z.object({ count: z.number(), has_more: z.boolean(), total_storage_size_bytes: z.nullable(z.number()) }),
  },
  'POST /trace/usage': {
    summary: 'Per-call LLM usage with descendants',
    body: TraceUsageReqSchema,
    response: UsageResSchema,
  },
  'POST /calls/usage': {
    summary: 'Complete LLM usage of given calls',
    body: CallsUsageReqSchema,
    response: UsageResSchema,
  },
  'POST /cost/create': {
    summary: 'Create project LLM prices',
    body: CostCreateReqSchema,
    response: z.object({ ids: z.array(z.array(z.string())) }),
  },
  'POST /cost/query': { summary: 'Query project LLM prices', body: CostQueryReqSchema },
  'POST /cost/purge': { summary: 'Delete project LLM prices by id', body: CostPurgeReqSchema, response: EmptySchema },
}
