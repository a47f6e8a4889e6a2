// The Feedback page's table of feedback rows: the newest of the chosen type in the chosen window, a page at a time,
// each with the call it is on (a link to the call in its trace).

/** Feedback rows per page. */
export const FEEDBACK_PAGE_SIZE = 25

/** A feedback row as `feedback/query` answers it (the fields the table reads). */
export type FeedbackRow = {
  id: string
  feedback_type: string
  payload: unknown
  created_at: string
  wb_user_id: string | null
  weave_ref: string
}

const get = (path: string) => ({ $getField: path })
const lit = (v: unknown) => ({ $literal: v })

/**
 * The body of `feedback/query` for one page of a type's feedback created in `[start, end)` (ISO times, the chart's
 * window), newest first. The type's `$eq` at the top of the query lets the API read that type's index alone.
 */
export function feedbackRowsRequest(
  project: string,
  type: string,
  window: { start: string; end: string },
  page: { offset: number; limit: number },
): Record<string, unknown> {
  return {
    project_id: project,
    query: {
      $expr: {
        $and: [
          { $eq: [get('feedback_type'), lit(type)] },
          { $gte: [get('created_at'), lit(window.start)] },
          { $lt: [get('created_at'), lit(window.end)] },
        ],
      },
    },
    // The id after the time: rows created in the same microsecond keep one order from page to page.
    sort_by: [
      { field: 'created_at', direction: 'desc' },
      { field: 'id', direction: 'desc' },
    ],
    offset: page.offset,
    limit: page.limit,
  }
}

/**
 * The value at a metric's `json_path` in a payload (`output.score` → `payload.output.score`), or undefined where the
 * payload has none. A path part is an object key (keys may hold spaces), or an index into a list.
 */
export function payloadValue(payload: unknown, jsonPath: string): unknown {
  let at: unknown = payload
  for (const part of jsonPath.split('.')) {
    if (Array.isArray(at) && /^\d+$/.test(part)) at = at[Number(part)]
    else if (typeof at === 'object' && at !== null && !Array.isArray(at) && Object.hasOwn(at, part)) {
      at = (at as Record<string, unknown>)[part]
    } else return undefined
  }
  return at
}

/**
 * The body of `calls/stream_query` that finds the traces of the calls a page of feedback is on: one request for the
 * page, only the columns its links and names need.
 */
export function feedbackCallsRequest(project: string, callIds: readonly string[]): Record<string, unknown> {
  const ids = [...new Set(callIds)]
  return {
    project_id: project,
    filter: { call_ids: ids },
    columns: ['id', 'trace_id', 'op_name', 'display_name'],
    sort_by: [],
    limit: ids.length,
  }
}
