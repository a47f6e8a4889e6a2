import { describe, expect, it } from 'vitest'
import { CallsQueryReqSchema } from '#shared/schemas/call'
import { FeedbackQueryReqSchema, type FeedbackRow } from '#shared/schemas/feedback'
import { assertFeedbackFields, feedbackField } from '#shared/tracing/feedback-fields'
import { matches } from '#shared/tracing/query-eval'
import {
  FEEDBACK_PAGE_SIZE,
  feedbackCallsRequest,
  feedbackRowsRequest,
  payloadValue,
} from '../../console/src/lib/feedback-rows.js'
import { feedbackRow } from '../support/feedback.js'

const WINDOW = { start: '2026-11-21T12:00:00.000Z', end: '2026-11-28T12:00:00.000Z' }

// A stored feedback row with the fields the query reads; the rest at their defaults.
function stored(feedbackType: string, createdAt: string): FeedbackRow {
  return feedbackRow(
    'acme/bot',
    createdAt,
    { score: 1 },
    {
      id: `id-${createdAt}`,
      weave_ref: 'weave:///acme/bot/call/c1',
      wb_user_id: 'user',
      feedback_type: feedbackType,
    },
  )
}

describe('feedbackRowsRequest', () => {
  it("asks for one page of the type's feedback, newest first, in fields feedback/query knows", () => {
    // Act
    const body = feedbackRowsRequest('acme/bot', 'rating', WINDOW, { offset: 25, limit: FEEDBACK_PAGE_SIZE })

    // Assess: the API's own schema and field check accept it
    const req = FeedbackQueryReqSchema.parse(body)
    expect(() => assertFeedbackFields(req)).not.toThrow()
    expect(req).toMatchObject({
      sort_by: [
        { field: 'created_at', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      offset: 25,
      limit: 25,
    })
  })

  it('matches the type within [start, end), as the API evaluates the query', () => {
    // Prepare
    const req = FeedbackQueryReqSchema.parse(
      feedbackRowsRequest('acme/bot', 'rating', WINDOW, { offset: 0, limit: 25 }),
    )
    const query = req.query
    if (query == null) throw new Error('the request has no query')
    const rows = [
      stored('rating', '2026-11-21T12:00:00.000000Z'),
      stored('rating', '2026-11-25T08:30:00.123456Z'),
      stored('rating', '2026-11-28T11:59:59.999999Z'),
      stored('rating', '2026-11-21T11:59:59.999999Z'),
      stored('rating', '2026-11-28T12:00:00.000000Z'),
      stored('wandb.runnable.judge', '2026-11-25T08:30:00.000000Z'),
      stored('rating2', '2026-11-25T08:30:00.000000Z'),
    ]

    // Act
    const found = rows.filter((r) => matches(query, (path) => feedbackField(r, path)))

    // Assess
    expect(found.map((r) => r.created_at)).toEqual([
      '2026-11-21T12:00:00.000000Z',
      '2026-11-25T08:30:00.123456Z',
      '2026-11-28T11:59:59.999999Z',
    ])
  })
})

describe('payloadValue', () => {
  it("reads a metric's json_path in a payload", () => {
    const payload = { output: { score: 0.75, 'Low quality': true, steps: [{ ok: 1 }] }, note: null }
    expect(payloadValue(payload, 'output.score')).toBe(0.75)
    expect(payloadValue(payload, 'output.Low quality')).toBe(true)
    expect(payloadValue(payload, 'output.steps.0.ok')).toBe(1)
    expect(payloadValue(payload, 'note')).toBeNull()
  })

  it('is undefined where the payload has no value at the path', () => {
    const payload = { output: { score: 1 }, list: [1] }
    const paths = ['missing', 'output.score.deeper', 'output.toString', 'list.1', 'list.x', 'output.score.0']
    expect(paths.map((p) => payloadValue(payload, p))).toEqual(paths.map(() => undefined))
    expect(payloadValue('text', 'length')).toBeUndefined()
  })
})

describe('feedbackCallsRequest', () => {
  it("reads a page's calls once each, with the columns a link needs", () => {
    // Act
    const body = feedbackCallsRequest('acme/bot', ['c1', 'c2', 'c1'])

    // Assess
    expect(body).toEqual({
      project_id: 'acme/bot',
      filter: { call_ids: ['c1', 'c2'] },
      columns: ['id', 'trace_id', 'op_name', 'display_name'],
      sort_by: [],
      limit: 2,
    })
    expect(CallsQueryReqSchema.parse(body)).toMatchObject({ filter: { call_ids: ['c1', 'c2'] } })
  })
})
