import { route as createChatCompletion } from '#functions/inference/create-chat-completion/route'
import { route as getUsage } from '#functions/inference/get-usage/route'
import { route as listModels } from '#functions/inference/list-models/route'
import { route as getConsole } from '#functions/meta/get-console/route'
import { route as getHealth } from '#functions/meta/get-health/route'
import { route as getOpenapi } from '#functions/meta/get-openapi/route'
import { route as getServerInfo } from '#functions/meta/get-server-info/route'
import { route as addAnnotationQueueItems } from '#functions/tracing/add-annotation-queue-items/route'
import { route as addObjTags } from '#functions/tracing/add-obj-tags/route'
import { route as callsUsage } from '#functions/tracing/calls-usage/route'
import { route as createAnnotationQueue } from '#functions/tracing/create-annotation-queue/route'
import { route as createCost } from '#functions/tracing/create-cost/route'
import { route as createFeedback } from '#functions/tracing/create-feedback/route'
import { route as createFeedbackBatch } from '#functions/tracing/create-feedback-batch/route'
import { route as createFile } from '#functions/tracing/create-file/route'
import { route as createObj } from '#functions/tracing/create-obj/route'
import { route as createTable } from '#functions/tracing/create-table/route'
import { route as createTableFromDigests } from '#functions/tracing/create-table-from-digests/route'
import { route as deleteAnnotationQueue } from '#functions/tracing/delete-annotation-queue/route'
import { route as deleteCalls } from '#functions/tracing/delete-calls/route'
import { route as deleteObj } from '#functions/tracing/delete-obj/route'
import { route as endCall } from '#functions/tracing/end-call/route'
import { route as exportOtelTraces } from '#functions/tracing/export-otel-traces/route'
import { route as getAnnotationQueuesStats } from '#functions/tracing/get-annotation-queues-stats/route'
import { route as getFeedbackPayloadSchema } from '#functions/tracing/get-feedback-payload-schema/route'
import { route as getFeedbackStats } from '#functions/tracing/get-feedback-stats/route'
import { route as listAliases } from '#functions/tracing/list-aliases/route'
import { route as listProjects } from '#functions/tracing/list-projects/route'
import { route as listTags } from '#functions/tracing/list-tags/route'
import { route as purgeCost } from '#functions/tracing/purge-cost/route'
import { route as purgeFeedback } from '#functions/tracing/purge-feedback/route'
import { route as queryAnnotationQueueItems } from '#functions/tracing/query-annotation-queue-items/route'
import { route as queryAnnotationQueues } from '#functions/tracing/query-annotation-queues/route'
import { route as queryCallStats } from '#functions/tracing/query-call-stats/route'
import { route as queryCost } from '#functions/tracing/query-cost/route'
import { route as queryFeedback } from '#functions/tracing/query-feedback/route'
import { route as queryObjs } from '#functions/tracing/query-objs/route'
import { route as queryTable } from '#functions/tracing/query-table/route'
import { route as queryTableStats } from '#functions/tracing/query-table-stats/route'
import { route as queryTableStatsBatch } from '#functions/tracing/query-table-stats-batch/route'
import { route as readAnnotationQueue } from '#functions/tracing/read-annotation-queue/route'
import { route as readCall } from '#functions/tracing/read-call/route'
import { route as readFileContent } from '#functions/tracing/read-file-content/route'
import { route as readObj } from '#functions/tracing/read-obj/route'
import { route as readRefsBatch } from '#functions/tracing/read-refs-batch/route'
import { route as removeObjAliases } from '#functions/tracing/remove-obj-aliases/route'
import { route as removeObjTags } from '#functions/tracing/remove-obj-tags/route'
import { route as replaceFeedback } from '#functions/tracing/replace-feedback/route'
import { route as setObjAliases } from '#functions/tracing/set-obj-aliases/route'
import { route as startCall } from '#functions/tracing/start-call/route'
import { route as streamQueryCalls } from '#functions/tracing/stream-query-calls/route'
import { route as traceUsage } from '#functions/tracing/trace-usage/route'
import { route as updateAnnotationQueue } from '#functions/tracing/update-annotation-queue/route'
import { route as updateAnnotationQueueItemProgress } from '#functions/tracing/update-annotation-queue-item-progress/route'
import { route as updateCall } from '#functions/tracing/update-call/route'
import { route as updateTable } from '#functions/tracing/update-table/route'
import { route as upsertCallBatch } from '#functions/tracing/upsert-call-batch/route'
import { route as createPreviewModel } from '#functions/training/create-preview-model/route'
import { route as deleteCheckpoints } from '#functions/training/delete-checkpoints/route'
import { route as deletePreviewModel } from '#functions/training/delete-preview-model/route'
import { route as getModelMetrics } from '#functions/training/get-model-metrics/route'
import { route as listCheckpoints } from '#functions/training/list-checkpoints/route'
import { route as listPreviewModels } from '#functions/training/list-preview-models/route'
import { route as logTrajectories } from '#functions/training/log-trajectories/route'
import type { FunctionDeclaration, FunctionFacts, RouteDeclaration } from '#shared/routes/declare'

/**
 * Every deployable function, as declared once in its `functions/<family>/<verb-noun>/route.ts`: its id, family, table
 * access, invocation, credentials and routes (path, method, request and response schemas, summary, example). Read by
 * the local server (to mount each function's `app`), the CDK app (one Lambda per entry), the OpenAPI document and the
 * route tests. Imports only the declarations, the zod schemas and the example ids they name, never handler code.
 * `test/functions/manifest.test.ts` checks each entry against its handler.
 */

/** One route served by a function, as far as deploying and mounting it goes. */
export type RouteEntry = Pick<RouteDeclaration, 'method' | 'path'>

/** One Lambda function, as far as deploying and mounting it goes (a `FunctionDeclaration` is one). */
export type FunctionEntry = FunctionFacts & { routes: readonly RouteEntry[] }

/** The functions Loom deploys, grouped by family. */
export const FUNCTIONS = [
  getHealth,
  getOpenapi,
  createPreviewModel,
  listPreviewModels,
  listCheckpoints,
  deleteCheckpoints,
  deletePreviewModel,
  logTrajectories,
  getModelMetrics,
  createChatCompletion,
  listModels,
  getUsage,
  startCall,
  endCall,
  upsertCallBatch,
  exportOtelTraces,
  readCall,
  updateCall,
  deleteCalls,
  streamQueryCalls,
  queryCallStats,
  traceUsage,
  callsUsage,
  createCost,
  queryCost,
  purgeCost,
  getServerInfo,
  // Tracing: objects, tags and aliases.
  createObj,
  readObj,
  readRefsBatch,
  queryObjs,
  deleteObj,
  addObjTags,
  removeObjTags,
  setObjAliases,
  removeObjAliases,
  listTags,
  listAliases,
  // Tracing: feedback.
  createFeedback,
  createFeedbackBatch,
  queryFeedback,
  purgeFeedback,
  replaceFeedback,
  getFeedbackStats,
  getFeedbackPayloadSchema,
  // Tracing: annotation queues.
  createAnnotationQueue,
  queryAnnotationQueues,
  readAnnotationQueue,
  updateAnnotationQueue,
  deleteAnnotationQueue,
  addAnnotationQueueItems,
  queryAnnotationQueueItems,
  getAnnotationQueuesStats,
  updateAnnotationQueueItemProgress,
  // Tracing: tables and files.
  createTable,
  queryTable,
  updateTable,
  createTableFromDigests,
  queryTableStats,
  queryTableStatsBatch,
  createFile,
  readFileContent,
  listProjects,
  getConsole,
] as const satisfies readonly FunctionDeclaration[]

/** The id of a deployed function (`tracing/read-obj`). */
export type FunctionId = (typeof FUNCTIONS)[number]['id']
