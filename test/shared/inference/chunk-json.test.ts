import { describe, expect, it } from 'vitest'
import { rewriteChunkJson } from '#shared/inference/chunk-json'

const ID = JSON.stringify('chatcmpl-gateway')
const MODEL = JSON.stringify('served/model')
const usage = '{"prompt_tokens":12,"total_tokens":13,"completion_tokens":1}'
const choices = '[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]'
const vllm = (extra = '') =>
  `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":7,"model":"upstream/name","choices":${choices}${extra}}`

// What the client would read: the text parsed, then the span framing cuts to drop `usage`.
const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>
const withoutUsage = (json: { text: string; usageStart: number; usageEnd: number }) =>
  parsed(json.text.slice(0, json.usageStart) + json.text.slice(json.usageEnd))

describe('rewriteChunkJson', () => {
  it("puts the gateway's id and model into a vLLM chunk and leaves every other byte as the upstream wrote it", () => {
    // Act
    const json = rewriteChunkJson(vllm(), ID, MODEL)

    // Assess
    const text = `{"id":${ID},"object":"chat.completion.chunk","created":7,"model":${MODEL},"choices":${choices}}`
    expect(json).toEqual({
      text,
      usageStart: -1,
      usageEnd: -1,
      choicesAt: vllm().indexOf('['),
      choicesAtOut: text.indexOf('['),
    })
  })

  it('finds the top-level usage member, wherever it is, so that cutting its span leaves the chunk without it', () => {
    // Prepare
    const last = vllm(`,"usage":${usage}`)
    const middle = vllm(`,"usage":${usage},"prompt_token_ids":null`)

    // Act
    const a = rewriteChunkJson(last, ID, MODEL)
    const b = rewriteChunkJson(middle, ID, MODEL)

    // Assess
    expect(a && withoutUsage(a)).toEqual({ ...parsed(vllm()), id: 'chatcmpl-gateway', model: 'served/model' })
    expect(b && withoutUsage(b)).toEqual({
      ...parsed(vllm()),
      id: 'chatcmpl-gateway',
      model: 'served/model',
      prompt_token_ids: null,
    })
    expect(a && parsed(a.text).usage).toEqual(JSON.parse(usage))
  })

  it('reads spaces between tokens, any key order, and a usage key nested below the top level', () => {
    // Prepare
    const text =
      `{ "object" : "chat.completion.chunk", "model" : "m\\u00e9", "usage" : {"prompt_tokens": 1}, "id" : "x",` +
      ` "choices" : [{"index": 0, "delta": {"content": "}\\"usage\\":{"}, "extra": {"usage": 5}}] }`

    // Act
    const json = rewriteChunkJson(text, ID, MODEL)

    // Assess
    expect(json && parsed(json.text)).toEqual({ ...parsed(text), id: 'chatcmpl-gateway', model: 'served/model' })
    const { usage: _dropped, ...rest } = parsed(text)
    expect(json && withoutUsage(json)).toEqual({ ...rest, id: 'chatcmpl-gateway', model: 'served/model' })
  })

  it('keeps unicode, escapes and brackets inside strings exactly as the upstream wrote them', () => {
    // Prepare
    const content = '"{[👋 héllo\\n\\"quoted\\" \\\\ \\u4e16\\u754c 世界]}"'
    const text = `{"id":"a","object":"chat.completion.chunk","created":1,"model":"b","choices":[{"index":0,"delta":{"content":${content}}}]}`

    // Act
    const json = rewriteChunkJson(text, ID, MODEL)

    // Assess
    expect(json?.text).toBe(text.replace('"id":"a"', `"id":${ID}`).replace('"model":"b"', `"model":${MODEL}`))
    expect(json && parsed(json.text)).toEqual({ ...parsed(text), id: 'chatcmpl-gateway', model: 'served/model' })
  })

  it('gives no text for what cannot go out as is, so the chunk is serialised instead', () => {
    // Prepare
    const cases = {
      'a line break between tokens': vllm().replace(',"choices"', ',\n"choices"'),
      'a carriage return between tokens': vllm().replace(',"choices"', ',\r"choices"'),
      'an escaped key that spells model': vllm().replace('"model"', '"mod\\u0065l"'),
      'the model repeated': vllm(',"model":"again"'),
      'the id repeated': vllm(',"id":"again"'),
      'no model': vllm().replace('"model":"upstream/name",', ''),
      'no id': vllm().replace('"id":"chatcmpl-up",', ''),
      'usage repeated': vllm(`,"usage":${usage},"usage":null`),
      'usage first': `{"usage":${usage},${vllm().slice(1)}`,
      'text after the object': `${vllm()} `,
      'an array': `[${vllm()}]`,
    }

    // Act
    const results = Object.fromEntries(
      Object.entries(cases).map(([name, text]) => [name, rewriteChunkJson(text, ID, MODEL)]),
    )

    // Assess
    for (const text of Object.values(cases)) expect(() => JSON.parse(text)).not.toThrow()
    expect(results).toEqual(Object.fromEntries(Object.keys(cases).map((name) => [name, undefined])))
  })
})
