import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-table/handler'
import { handler } from '#functions/tracing/query-table/handler'
import { app as updateApp } from '#functions/tracing/update-table/handler'
import { LAMBDA_RESPONSE_BYTES } from '#shared/http/lambda-handler'
import { authorizerFor } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { newProjectCaller, send } from '../../support/tracing.js'

type Result = { statusCode: number; body: string; multiValueHeaders?: Record<string, string[]> }

describe('answers larger than a Lambda function may return', () => {
  it('are a 413 in the family shape naming the size, where API Gateway would answer a bodiless 502', async () => {
    // Prepare: a table of 8 MB of rows (two requests under the body limit), read whole through the Lambda entry.
    const caller = await newProjectCaller()
    const rows = (from: number) => Array.from({ length: 40 }, (_, i) => ({ i: from + i, text: 'x'.repeat(100_000) }))
    const base = await send(
      createApp,
      '/table/create',
      { table: { project_id: caller.project, rows: rows(0) } },
      caller,
    )
    const grown = await send(
      updateApp,
      '/table/update',
      {
        project_id: caller.project,
        base_digest: base.body.digest,
        updates: rows(40).map((row) => ({ append: { row } })),
      },
      caller,
    )
    const query = (extra: Record<string, unknown>) =>
      handler(
        restEvent({
          method: 'POST',
          path: '/table/query',
          headers: { 'content-type': 'application/json', ...caller.basic },
          body: JSON.stringify({ project_id: caller.project, digest: grown.body.digest, ...extra }),
          authorizer: authorizerFor(caller),
        }),
        lambdaContext(),
      ) as Promise<Result>

    // Act
    const whole = await query({})
    const page = await query({ limit: 20 })

    // Assess
    expect(grown.status).toBe(200)
    expect(whole.statusCode).toBe(413)
    expect(whole.multiValueHeaders?.['content-type']).toEqual(['application/json'])
    const reason = (JSON.parse(whole.body) as { reason: string }).reason
    expect(reason).toMatch(/^The answer \(\d+ bytes\) is larger than the 6291456 bytes a Lambda function may return/)
    expect(Number(/\((\d+) bytes\)/.exec(reason)?.[1])).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    expect(page.statusCode).toBe(200)
    expect((JSON.parse(page.body) as { rows: unknown[] }).rows).toHaveLength(20)
    expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(LAMBDA_RESPONSE_BYTES)
  })
})
