import { describe, expect, it } from 'vitest'
import { app } from '#functions/tracing/get-feedback-payload-schema/handler'
import { seedFeedback } from '../../support/feedback.js'
import { newProjectCaller, send } from '../../support/tracing.js'

describe('POST /feedback/payload_schema', () => {
  it('lists leaf paths sorted with their value types', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const t = '2024-02-01T00:00:00.000Z'
    await seedFeedback(p, t, { output: { score: 0.9 } })
    await seedFeedback(p, t, { output: { score: 0.5 }, label: 'good' })
    await seedFeedback(p, t, {
      flag: true,
      mixed: 1,
      tags: ['a', 'b'],
      nothing: null,
      'dotted.key': 1,
      '': 2,
      'bad-char': 3,
      'with space': 4,
      "a'b": 5,
    })
    await seedFeedback(p, t, { mixed: false })

    // Act
    const res = await send(
      app,
      '/feedback/payload_schema',
      { project_id: p, start: t, end: '2024-02-01T01:00:00Z' },
      caller,
    )

    // Assess
    expect(res.body).toEqual({
      paths: [
        { json_path: 'flag', value_type: 'boolean' },
        { json_path: 'label', value_type: 'categorical' },
        { json_path: 'mixed', value_type: 'categorical' },
        { json_path: 'nothing', value_type: 'numeric' },
        { json_path: 'output.score', value_type: 'numeric' },
        { json_path: 'tags', value_type: 'categorical' },
        { json_path: 'with space', value_type: 'numeric' },
      ],
    })
  })

  it('samples only the newest sample_limit payloads of the window and type', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    await seedFeedback(p, '2024-02-01T00:00:00.000Z', { old: 1 })
    await seedFeedback(p, '2024-02-01T00:10:00.000Z', { recent: 1 })
    await seedFeedback(p, '2024-02-01T00:20:00.000Z', { other: 1 }, { feedback_type: 'other' })

    // Act
    const res = await send(
      app,
      '/feedback/payload_schema',
      {
        project_id: p,
        start: '2024-02-01T00:00:00Z',
        end: '2024-02-01T01:00:00Z',
        feedback_type: 'score',
        sample_limit: 1,
      },
      caller,
    )

    // Assess
    expect(res.body).toEqual({ paths: [{ json_path: 'recent', value_type: 'numeric' }] })
  })

  it('reads numeric start and end as pydantic does (milliseconds above 2e10) and answers 422 out of range', async () => {
    // Prepare
    const caller = await newProjectCaller()
    await seedFeedback(caller.project, '2286-11-20T17:46:40.005Z', { score: 1 })
    const schema = (start: number, end: number) =>
      send(app, '/feedback/payload_schema', { project_id: caller.project, start, end }, caller)

    // Act
    const millis = await schema(1e13, 1e13 + 10)
    const tooEarly = await schema(-1e16, 1e13)

    // Assess
    expect(millis).toEqual({ status: 200, body: { paths: [{ json_path: 'score', value_type: 'numeric' }] } })
    expect(tooEarly.status).toBe(422)
    expect(tooEarly.body.detail).toEqual([
      {
        type: 'datetime_parsing',
        loc: ['body', 'start'],
        msg: 'Input should be a valid datetime, dates before 0000 are not supported as unix timestamps',
        input: -1e16,
        ctx: { error: 'dates before 0000 are not supported as unix timestamps' },
      },
    ])
  })

  it('answers 422 for a sample_limit out of range or a reversed window, 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const big = await send(
      app,
      '/feedback/payload_schema',
      { project_id: a.project, start: '2024-01-01T00:00:00Z', sample_limit: 5001 },
      a,
    )
    const reversed = await send(
      app,
      '/feedback/payload_schema',
      { project_id: a.project, start: '2024-01-02T00:00:00Z', end: '2024-01-01T00:00:00Z' },
      a,
    )
    const foreign = await send(
      app,
      '/feedback/payload_schema',
      { project_id: b.project, start: '2024-01-01T00:00:00Z' },
      a,
    )
    expect(big.status).toBe(422)
    expect(reversed.status).toBe(422)
    expect(foreign.status).toBe(403)
  })
})
