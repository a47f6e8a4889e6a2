import { describe, expect, it } from 'vitest'
import { app as createFile } from '#functions/tracing/create-file/handler'
import { handler } from '#functions/tracing/read-file-content/handler'
import { authorizerFor } from '../support/calls.js'
import { restEvent } from '../support/events.js'
import { invokeLambda } from '../support/lambda-invoke.js'
import { newProjectCaller } from '../support/tracing.js'

// The REST API lists `*/*` as binary (infra/api-stack.ts): API Gateway then hands every request body to Lambda
// base64-encoded. file/content streams its answer (`stream: true`), and a streamed body reaches the client as the
// function wrote it, bytes included, with no binary media type involved. This is the Lambda side of that contract.
describe('file/content through the REST API wiring', () => {
  it('takes a base64-encoded request and streams the bytes as they are', async () => {
    // Prepare: every byte value, which a UTF-8 text body could not carry.
    const caller = await newProjectCaller()
    const bytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256)
    const form = new FormData()
    form.set('project_id', caller.project)
    form.set('file', new Blob([bytes]), 'blob.bin')
    const created = await createFile.request('/file/create', { method: 'POST', headers: caller.basic, body: form })
    const { digest } = (await created.json()) as { digest: string }
    const event = restEvent({
      method: 'POST',
      path: '/file/content',
      headers: { 'content-type': 'application/json', accept: '*/*', ...caller.basic },
      body: Buffer.from(JSON.stringify({ project_id: caller.project, digest })).toString('base64'),
      authorizer: authorizerFor(caller),
    })
    const encoded = { ...event, isBase64Encoded: true }

    // Act
    const result = await invokeLambda(handler, encoded)

    // Assess
    expect(created.status).toBe(200)
    expect(result).toMatchObject({ streamed: true, statusCode: 200 })
    expect(result.headers['content-type']).toBe('application/octet-stream')
    expect(result.bytes.equals(Buffer.from(bytes))).toBe(true)
  })
})
