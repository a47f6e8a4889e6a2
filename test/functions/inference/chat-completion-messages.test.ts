import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { decode } from '#shared/engine/tokenizer'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit } from '../../support/auth.js'
import { addUpstreamModel, upstreamModelFixture } from '../../support/models.js'

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

const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }
const withPart = (part: Record<string, unknown>) => [
  { role: 'user', content: [{ type: 'text', text: 'What is this?' }, part] },
]

describe('POST /v1/chat/completions with media content parts', () => {
  it("refuses an image for the reference engine, text-only by default, with vLLM's message", async () => {
    // Act
    const res = await chat({ model: reference, messages: withPart(IMAGE) })

    // Assess
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error).toEqual({
      message: `${reference} is not a multimodal model`,
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
  })

  it.each([
    { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
    { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } },
    { type: 'image_embeds', image_embeds: 'AAAA' },
  ])('refuses a $type part for a text-only model', async (part) => {
    // Act
    const res = await chat({ model: reference, messages: withPart(part) })

    // Assess
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error.message).toBe(`${reference} is not a multimodal model`)
  })

  it('forwards an image to an upstream model the catalog does not mark text-only', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ model, messages: withPart(IMAGE) })

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen[before]?.body.messages).toEqual(withPart(IMAGE))
  })

  it('refuses an image for an upstream model marked text-only, naming its root, without calling the upstream', async () => {
    // Prepare
    const textOnly = await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      multimodal: false,
      root: 'meta-llama/Llama-3.1-8B-Instruct',
    })
    const before = upstream.seen.length

    // Act
    const res = await chat({ model: textOnly.id, messages: withPart(IMAGE) })

    // Assess
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error.message).toBe(
      'meta-llama/Llama-3.1-8B-Instruct is not a multimodal model',
    )
    expect(upstream.seen.length).toBe(before)
  })

  it('lets text, thinking and refusal parts through for a text-only model', async () => {
    // Act
    const res = await chat({
      model: reference,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
      ],
      max_tokens: 2,
    })

    // Assess
    expect(res.status).toBe(200)
  })
})

const SUPPORTED_PARTS =
  'audio_embeds, audio_url, image_embeds, image_pil, image_url, input_audio, input_image, input_text, output_text, ' +
  'prompt_embeds, refusal, text, thinking, tool_reference, video_embeds, video_url'

describe('POST /v1/chat/completions with text content parts', () => {
  it('gives string, input_text, output_text, thinking and refusal parts to the reference template as text', async () => {
    // Act
    const res = await chat({
      model: reference,
      messages: [
        {
          role: 'user',
          content: [
            'Say',
            { type: 'input_text', text: ' hello' },
            { type: 'output_text', text: ' to' },
            { type: 'thinking', thinking: ' the' },
            { type: 'refusal', refusal: ' weaver' },
            { type: 'text', text: null },
            { type: 'text', text: '.' },
          ],
        },
      ],
      max_tokens: 1,
      return_token_ids: true,
    })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as { prompt_token_ids: number[] }
    expect(decode(body.prompt_token_ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false })).toContain(
      '<|im_start|>user\nSay hello to the weaver.<|im_end|>\n',
    )
  })

  it('forwards string and input_text parts to an upstream model as the client sent them', async () => {
    // Prepare
    const before = upstream.seen.length
    const messages = [{ role: 'user', content: ['Hi', { type: 'input_text', text: ' there', cache: 1 }] }]

    // Act
    const res = await chat({ model, messages })

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen[before]?.body.messages).toEqual(messages)
  })

  it.each([
    ['the reference engine', () => reference, { type: 'foo', text: 'x' }],
    ['an upstream model', () => model, { type: 'foo', text: 'x' }],
    ['the reference engine', () => reference, { type: 'file', file: { file_id: 'f' } }],
  ])(
    "refuses an unknown part type with vLLM's message for %s (%j), without calling the upstream",
    async (_name, target, part) => {
      // Prepare
      const before = upstream.seen.length

      // Act
      const res = await chat({ model: target(), messages: withPart(part) })

      // Assess
      expect(res.status).toBe(400)
      expect(((await res.json()) as ErrorBody).error).toEqual({
        message: `Unsupported chat content part type: '${part.type}'. Supported types: ${SUPPORTED_PARTS}.`,
        type: 'BadRequestError',
        param: 'type',
        code: 400,
      })
      expect(upstream.seen.length).toBe(before)
    },
  )

  it("forwards OpenAI's file parts to an upstream model (hosted APIs take them)", async () => {
    // Prepare
    const before = upstream.seen.length
    const messages = withPart({ type: 'file', file: { file_id: 'file-abc' } })

    // Act
    const res = await chat({ model, messages })

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen[before]?.body.messages).toEqual(messages)
  })

  it.each([
    [{ text: 'no type' }, "Missing 'type' field in multimodal part."],
    [{ type: 7, text: 'x' }, "Invalid 'type' field in multimodal part."],
    [{ type: 'text', text: 'x', uuid: 'u-1' }, "Missing 'type' field in multimodal part."],
  ])('refuses the part %j as vLLM reads its type', async (part, message) => {
    // Act
    const res = await chat({ model, messages: withPart(part) })

    // Assess
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error).toMatchObject({ message, param: 'type' })
  })

  it('answers the first offending part in message order', async () => {
    // Act
    const imageFirst = await chat({ model: reference, messages: [...withPart(IMAGE), ...withPart({ type: 'foo' })] })
    const unknownFirst = await chat({ model: reference, messages: [...withPart({ type: 'foo' }), ...withPart(IMAGE)] })

    // Assess
    expect(((await imageFirst.json()) as ErrorBody).error.message).toBe(`${reference} is not a multimodal model`)
    expect(((await unknownFirst.json()) as ErrorBody).error.message).toMatch(
      /^Unsupported chat content part type: 'foo'/,
    )
  })
})

describe('POST /v1/chat/completions with continue_final_message', () => {
  const prefill = [
    { role: 'user', content: 'Tell me a story.' },
    { role: 'assistant', content: 'Once upon a time' },
  ]

  it.each([
    ['the reference engine', () => reference],
    ['an upstream model', () => model],
  ])('refuses it with add_generation_prompt left at its default (true) for %s', async (_name, target) => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ model: target(), messages: prefill, continue_final_message: true })

    // Assess
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as ErrorBody
    expect(error.type).toBe('BadRequestError')
    expect(error.message).toMatch(/^continue_final_message and add_generation_prompt are not compatible\. /)
    expect(upstream.seen.length).toBe(before)
  })

  it('continues the final message when add_generation_prompt is false', async () => {
    // Act
    const res = await chat({
      model: reference,
      messages: prefill,
      continue_final_message: true,
      add_generation_prompt: false,
      echo: true,
      max_tokens: 3,
    })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as { choices: { message: { role: string; content: string } }[] }
    expect(body.choices[0]?.message.role).toBe('assistant')
    expect(body.choices[0]?.message.content.startsWith('Once upon a time')).toBe(true)
  })
})

describe('POST /v1/chat/completions with tools and tool-call history', () => {
  const WEATHER = {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  }
  const history = (calls: unknown) => [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: calls },
    { role: 'tool', tool_call_id: 'c1', content: '20C' },
  ]

  it.each([
    ['left out', {}],
    ['null', { tool_choice: null }],
  ])(
    'asks an upstream model for no tool calls when tool_choice is %s (vLLM would choose "auto")',
    async (_, choice) => {
      // Prepare
      const before = upstream.seen.length

      // Act
      const res = await chat({ model, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER], ...choice })

      // Assess
      expect(res.status).toBe(200)
      expect(upstream.seen[before]?.body.tool_choice).toBe('none')
      expect(upstream.seen[before]?.body.tools).toEqual([WEATHER])
    },
  )

  it('sends no tool_choice upstream when the request has no tools', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ model, messages: [{ role: 'user', content: 'Hi' }] })

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen[before]?.body).not.toHaveProperty('tool_choice')
  })

  it('accepts a function call in the history, and a tool message whose tool_call_id is null', async () => {
    // Prepare
    const messages = history([{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }])
    messages.push({ role: 'tool', tool_call_id: null as unknown as string, content: '21C' })

    // Act
    const res = await chat({ model: reference, messages, tools: [WEATHER], max_tokens: 2 })

    // Assess
    expect(res.status, await res.clone().text()).toBe(200)
  })

  it.each([
    ['of another type', [{ id: 'c1', type: 'custom', custom: { name: 'x', input: '' } }]],
    ['without its function', [{ id: 'c1', type: 'function' }]],
    ['with a null type', [{ id: 'c1', type: null, function: { name: 'get_weather', arguments: '{}' } }]],
    ['empty', [{}]],
  ])('refuses an earlier assistant tool call %s as vLLM does, without calling an upstream', async (_, calls) => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const answers = await Promise.all([reference, model].map((m) => chat({ model: m, messages: history(calls) })))

    // Assess
    for (const res of answers) {
      expect(res.status).toBe(400)
      expect(((await res.json()) as ErrorBody).error).toEqual({
        message: "chat completions only support assistant tool_calls of type 'function'.",
        type: 'BadRequestError',
        param: 'tool_calls',
        code: 400,
      })
    }
    expect(upstream.seen.length).toBe(before)
  })

  it('lets an assistant tool call without a type through (vLLM reads it as a function call)', async () => {
    // Act
    const res = await chat({
      model: reference,
      messages: history([{ id: 'c1', function: { name: 'get_weather', arguments: 'not json' } }]),
      max_tokens: 2,
    })

    // Assess
    expect(res.status).toBe(200)
  })
})
