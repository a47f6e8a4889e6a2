import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { handler as metricsHandler } from '#functions/training/get-model-metrics/handler'
import { putLogRecord } from '#shared/db/training-log-repository'
import { LAMBDA_RESPONSE_BYTES } from '#shared/http/lambda-handler'
import type { MetricsHistory } from '#shared/schemas/training-log'
import { newCaller } from '../../support/auth.js'
import { authorizerFor } from '../../support/calls.js'
import { restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { newModel } from '../../support/training.js'

const LOGS = 20
const KEYS_PER_LOG = 3_000

describe('GET /v1/preview/models/{model_id}/metrics through its Lambda entry', () => {
  it('answers a history larger than a buffered Lambda function may return (6 MB) whole, streamed', async () => {
    // Prepare: 20 log records of 3,000 metrics each (about 330 KB, under DynamoDB's 400 KB item), written through the
    // repository: as much history as about 7,700 realistic ART logs, every one at step 0 (docs/training.md §5.1).
    const caller = await newCaller()
    const model = await newModel(caller)
    const metrics = Object.fromEntries(
      Array.from({ length: KEYS_PER_LOG }, (_, k) => [`val/${'m'.repeat(90)}_${String(k).padStart(5, '0')}`, k + 0.5]),
    )
    for (let i = 0; i < LOGS; i++) {
      await putLogRecord({
        modelId: model.id,
        logId: randomUUID(),
        split: 'val',
        step: 0,
        recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        metrics,
        groupCount: 1,
        trajectoryCount: 1,
        exceptionCount: 0,
        chunks: [0],
        codec: 'gzip',
      })
    }

    // Act
    const answer = await invokeLambda(
      metricsHandler,
      restEvent({
        path: `/v1/preview/models/${model.id}/metrics`,
        headers: caller.bearer,
        authorizer: authorizerFor(caller),
      }),
    )

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 200 })
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    expect(answer.bytes.length).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    const history = JSON.parse(answer.body) as MetricsHistory
    expect(history.rows).toHaveLength(LOGS)
    expect(history.rows.every((row) => Object.keys(row.metrics).length === KEYS_PER_LOG)).toBe(true)
    expect(Object.keys(history.series)).toHaveLength(KEYS_PER_LOG)
    expect(history.series[`val/${'m'.repeat(90)}_02999`]?.values).toEqual(Array(LOGS).fill(2999.5))
  })

  it("answers 404 in the family's shape for another entity's model, as the buffered entry did", async () => {
    // Prepare
    const owner = await newCaller()
    const other = await newCaller()
    const model = await newModel(owner)

    // Act
    const answer = await invokeLambda(
      metricsHandler,
      restEvent({
        path: `/v1/preview/models/${model.id}/metrics`,
        headers: other.bearer,
        authorizer: authorizerFor(other),
      }),
    )

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 404 })
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(answer.body)).toEqual({ detail: `Model '${model.id}' not found` })
  })
})
