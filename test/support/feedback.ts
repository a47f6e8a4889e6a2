import { type FeedbackItemOptions, putFeedback } from '#shared/db/feedback-repository'
import type { FeedbackRow } from '#shared/schemas/feedback'
import { uuidv7 } from '#shared/tracing/ids'

/** A stored feedback row at a chosen time, with the scorer and span fields at their defaults (tests, benchmarks). */
export function feedbackRow(
  project: string,
  createdAt: string,
  payload: Record<string, unknown>,
  extra: Partial<FeedbackRow> = {},
): FeedbackRow {
  return {
    id: uuidv7(Date.parse(createdAt)),
    project_id: project,
    weave_ref: `weave:///${project}/call/c`,
    wb_user_id: 'seed-user',
    creator: null,
    created_at: createdAt,
    feedback_type: 'score',
    payload,
    annotation_ref: null,
    runnable_ref: null,
    call_ref: null,
    trigger_ref: null,
    queue_id: null,
    scorer_tags: [],
    scorer_tag_reasons: {},
    scorer_tag_confidences: {},
    scorer_ratings: {},
    scorer_rating_reasons: {},
    scorer_rating_confidences: {},
    span_agent_name: '',
    span_agent_version: '',
    span_status_code: 'UNSET',
    span_conversation_id: '',
    span_trace_id: '',
    scorer_trace_id: '',
    ...extra,
  }
}

/**
 * Stores a feedback row at a chosen time through the real repository (the API always stamps "now"); without
 * `options.callLive` the row is stored as rows written before feedback recorded whether its call was live.
 */
export async function seedFeedback(
  project: string,
  createdAt: string,
  payload: Record<string, unknown>,
  extra: Partial<FeedbackRow> = {},
  options: FeedbackItemOptions = {},
): Promise<FeedbackRow> {
  const row = feedbackRow(project, createdAt, payload, extra)
  await putFeedback(row, options)
  return row
}
