import '../../support/lambda-shim.js'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { settleAfterResponse } from '#shared/http/after-response'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'

const { caller, model } = await upstreamModelFixture()

type Call = {
  op_name: string
  inputs: Record<string, unknown>
  output: Record<string, unknown>
  summary: Record<string, unknown>
  exception: string | null
}

async function calls(projectId: string): Promise<Call[]> {
  const res = await queryApp.request('/calls/stream_query', jsonInit({ project_id: projectId }, caller.basic))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Call)
}

// The trace is written after the response (shared/http/after-response.ts): once that work has settled it is stored,
// or it never will be. No polling: a slow host waits longer instead of failing.
async function tracedCalls(projectId: string): Promise<Call[]> {
  await settleAfterResponse()
  return calls(projectId)
}

const messages = [{ role: 'user', content: 'trace me please' }]

describe('tracing of gateway completions', () => {
  it('records a non-streamed completion as a call with the request, the response and usage by model', async () => {
    // Prepare
    const projectId = `${caller.entity}/traced-${Date.now()}`

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages }, { ...caller.bearer, 'OpenAI-Project': projectId }),
    )
    const body = (await res.json()) as { id: string }
    const [call, ...more] = await tracedCalls(projectId)

    // Assess
    expect(more).toEqual([])
    expect(call?.op_name).toBe('loom.chat.completions')
    expect(call?.inputs).toMatchObject({ model, messages })
    expect(call?.output).toMatchObject({ id: body.id, choices: [{ message: { content: 'trace me please' } }] })
    expect(call?.summary).toMatchObject({
      usage: { [model]: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, requests: 1 } },
    })
  })

  it('records a streamed completion with its assembled output', async () => {
    const projectId = `${caller.entity}/traced-stream-${Date.now()}`
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages, stream: true }, { ...caller.bearer, 'OpenAI-Project': projectId }),
    )
    await res.text()
    const [call] = await tracedCalls(projectId)
    expect(call?.output).toMatchObject({
      choices: [{ index: 0, message: { role: 'assistant', content: 'trace me please' }, finish_reason: 'stop' }],
    })
    expect(call?.summary).toMatchObject({ usage: { [model]: { prompt_tokens: 5, completion_tokens: 3 } } })
  })

  it('records nothing with Loom-Trace: off', async () => {
    // Prepare
    const projectId = `${caller.entity}/untraced-${Date.now()}`

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages }, { ...caller.bearer, 'OpenAI-Project': projectId, 'Loom-Trace': 'off' }),
    )
    await res.json()

    // Assess
    expect(res.status).toBe(200)
    expect(await tracedCalls(projectId)).toEqual([])
  })
})
