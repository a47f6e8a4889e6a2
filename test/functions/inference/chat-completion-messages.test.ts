import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { decode } from '#shared/engine/tokenizer'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'

// What vLLM's chat layer does with the messages themselves: roles, and how the chat template is applied.

const { upstream, caller, model } = await upstreamModelFixture()
const reference = `test-org/reference-${randomUUID().slice(0, 8)}`
await putModel(referenceCatalogModel({ id: reference, root: reference, entities: [caller.entity] }))
clearCatalogCache()

function chat(body: Record<string, unknown>) {
  return app.request('/v1/chat/completions', jsonInit(body, caller.bearer))
}

type ErrorBody = { error: { message: string; type: string; param: string | null; code: number } }

const TOOL_TURN = [
  { role: 'user', content: 'What is 2+2?' },
  { role: 'ipython', content: '4' },
]

describe('POST /v1/chat/completions with custom roles', () => {
  it('forwards a custom role to an upstream model unchanged', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ model, messages: TOOL_TURN })

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen[before]?.body.messages).toEqual(TOOL_TURN)
  })

  it('renders a custom role with the reference engine chat template', async () => {
    // Act
    const res = await chat({ model: reference, messages: TOOL_TURN, max_tokens: 2, return_token_ids: true })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as { prompt_token_ids: number[] }
    expect(decode(body.prompt_token_ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false })).toContain(
      '<|im_start|>ipython\n4<|im_end|>\n<|im_start|>assistant\n',
    )
  })

  it('still requires the role to be a string', async () => {
    // Act
    const res = await chat({ model, messages: [{ role: null, content: 'x' }] })

    // Assess
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as ErrorBody
    expect(error.param).toBe('body.messages.0.role')
    expect(error.message).toContain("'type': 'string_type'")
  })
})
