import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { rewriteChunkJson } from '#shared/inference/chunk-json'
import { ChunkTemplate } from '#shared/inference/chunk-template'

const ID = JSON.stringify('chatcmpl-gateway')
const MODEL = JSON.stringify('served/model')

// What the client would read: the text parsed, then the span framing cuts to drop `usage`.
const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>
const withoutUsage = (json: { text: string; usageStart: number; usageEnd: number }) =>
  parsed(json.text.slice(0, json.usageStart) + json.text.slice(json.usageEnd))

describe('ChunkTemplate', () => {
  const prefix = '{"id":"chatcmpl-up","object":"chat.completion.chunk","created":7,"model":"upstream/name","choices":'
  const role = `${prefix}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}`
  const content = (json: string, tail = '}') =>
    `${prefix}[{"index":0,"delta":{"content":${json}},"logprobs":null,"finish_reason":null}]${tail}`
  const finish = (json: string, reason: string, tail = '}') =>
    `${prefix}[{"index":0,"delta":{"content":${json}},"logprobs":null,"finish_reason":"${reason}","stop_reason":null}]${tail}`
  const learned = () => {
    const template = new ChunkTemplate('chatcmpl-gateway', 'served/model')
    const json = rewriteChunkJson(role, ID, MODEL)
    if (json !== undefined) template.learn(role, json)
    return template
  }
  // What parsing and rewriting the text gives, which the template must give without parsing.
  const expected = (text: string) => {
    const json = rewriteChunkJson(text, ID, MODEL)
    return {
      chunk: { ...parsed(text), id: 'chatcmpl-gateway', model: 'served/model' },
      json: json && { text: json.text, usageStart: json.usageStart, usageEnd: json.usageEnd },
    }
  }
  // The chunk the parse path sends its text for (openai-compatible.ts): every choice has `logprobs` and
  // `finish_reason`, a finished one `stop_reason`, so that nothing is added to it.
  const sentAsText = (text: string) =>
    (parsed(text).choices as Record<string, unknown>[]).every(
      (c) =>
        c.logprobs !== undefined &&
        c.finish_reason !== undefined &&
        (c.finish_reason === null || c.stop_reason !== undefined),
    ) && rewriteChunkJson(text, ID, MODEL) !== undefined

  it("builds the stream's content chunks from their text, equal to parsing them, with or without usage", () => {
    // Prepare
    const strings = [
      '"Hello"',
      '""',
      '" wörld 👋 世界"',
      '"line\\nbreak \\"q\\" back\\\\slash \\u00e9 \\ud83d\\udc4b"',
      '"}]\\",\\"usage\\":{"',
    ]
    const texts = [
      ...strings.flatMap((s) => [
        content(s),
        content(s, ',"usage":{"prompt_tokens":12,"total_tokens":13,"completion_tokens":1}}'),
      ]),
      content(
        '"x"',
        ',"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13,"prompt_tokens_details":null}}',
      ),
      content('"x"', ',"usage":null}'),
    ]
    const template = learned()

    // Act
    const built = texts.map((text) => template.usualChunk(text))

    // Assess
    expect(built).toEqual(texts.map(expected))
    expect(built[5]?.chunk.choices[0]?.delta.content).toBe(' wörld 👋 世界')
    expect(built[7]?.chunk.choices[0]?.delta.content).toBe('line\nbreak "q" back\\slash é 👋')
    const withUsage = built[1]?.json
    expect(withUsage && withoutUsage(withUsage)).toEqual({
      ...parsed(texts[0] as string),
      ...expected(texts[0] as string).chunk,
    })
  })

  it("builds the stream's finish and usage chunks from their text, equal to parsing them", () => {
    // Prepare
    const usageJson = '{"prompt_tokens":12,"total_tokens":22,"completion_tokens":10}'
    const texts = [
      finish('"."', 'stop'),
      finish('""', 'length'),
      finish('"x"', 'tool_calls', `,"usage":${usageJson}}`),
      finish('"\\u00e9"', 'stop'),
      `${prefix}[],"usage":${usageJson}}`,
      `${prefix}[],"usage":{"prompt_tokens":12,"total_tokens":22,"completion_tokens":10,"prompt_tokens_details":null}}`,
      `${prefix}[],"usage":null}`,
    ]
    const template = learned()

    // Act
    const built = texts.map((text) => template.usualChunk(text))

    // Assess
    expect(built).toEqual(texts.map(expected))
    expect(built.map((b) => JSON.stringify(b?.chunk))).toEqual(texts.map((t) => JSON.stringify(expected(t).chunk)))
    expect(built[0]?.chunk.choices[0]).toEqual({
      index: 0,
      delta: { content: '.' },
      logprobs: null,
      finish_reason: 'stop',
      stop_reason: null,
    })
    expect(built[4]?.chunk).toMatchObject({ choices: [], usage: JSON.parse(usageJson) })
    const cut = built[4]?.json
    expect(cut && withoutUsage(cut)).toEqual({ ...expected(texts[4] as string).chunk, usage: undefined })
  })

  it('gives for any content, finish reason, stop reason and usage either what parsing gives or nothing', () => {
    const template = learned()
    const seen = { built: 0, parsed: 0 }
    const USAGE_END = ',"usage":{"prompt_tokens":12,"total_tokens":22,"completion_tokens":10}}'
    // Content as JSON writes it, with non-ASCII escaped (Python's default) or slashes escaped.
    const contentJson = fc
      .tuple(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('', '"', '\\', '}]', '\u2028')),
        fc.nat(2),
      )
      .map(([s, style]) => {
        const json = JSON.stringify(s)
        if (style === 1)
          return json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
        return style === 2 ? json.replaceAll('/', '\\/') : json
      })
    const reason = fc.constantFrom('null', '"stop"', '"length"', '"tool_calls"', '"st\\"op"', '"a\\u0000"', '1', '"é"')
    const stop = fc.constantFrom(undefined, 'null', '7', '"</s>"')
    const tail = fc.constantFrom(
      '}',
      USAGE_END,
      ',"usage":null}',
      ',"usage":{"prompt_tokens":1}, "x":1}',
      ',"usage":{"a":1},"usage":{"b":2}}',
      ',"prompt_token_ids":null}',
      '',
    )
    fc.assert(
      fc.property(fc.boolean(), contentJson, reason, stop, tail, (empty, json, finishReason, stopReason, end) => {
        // Prepare
        const choice = `{"index":0,"delta":{"content":${json}},"logprobs":null,"finish_reason":${finishReason}${stopReason === undefined ? '' : `,"stop_reason":${stopReason}`}}`
        const text = `${prefix}[${empty ? '' : choice}]${end}`
        let valid = true
        try {
          JSON.parse(text)
        } catch {
          valid = false
        }
        fc.pre(valid)

        // Act
        const built = template.usualChunk(text)

        // Assess
        if (built === undefined) {
          seen.parsed++
          // The usual layouts are always taken from their text.
          const usualEnd = end === '}' || end === USAGE_END || end === ',"usage":null}'
          const usualChoice =
            finishReason === 'null'
              ? stopReason === undefined
              : /^"[a-z_]+"$/.test(finishReason) && stopReason === 'null'
          const usual = usualEnd && (empty ? end !== '}' : usualChoice)
          expect(usual).toBe(false)
          return
        }
        seen.built++
        expect(sentAsText(text)).toBe(true)
        expect(built).toEqual(expected(text))
        expect(JSON.stringify(built.chunk)).toBe(JSON.stringify(expected(text).chunk))
      }),
      { numRuns: 2_000 },
    )
    expect(seen.built).toBeGreaterThan(100)
    expect(seen.parsed).toBeGreaterThan(100)
  })

  it('leaves every other chunk to be parsed', () => {
    // Prepare
    const template = learned()
    const others = [
      content('"x"').replace('"index":0', '"index":1'),
      content('"x"').replace('"content":"x"', '"reasoning":"x"'),
      content('"x"').replace('"finish_reason":null', '"finish_reason":"stop"'),
      content('"x"').replace('"logprobs":null', '"logprobs":{"content":[]}'),
      content('"x"').replace('"created":7', '"created":8'),
      content('"x"', ',"usage":{"prompt_tokens":012,"total_tokens":13,"completion_tokens":1}}'),
      content('"x"', ',"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2}}'),
      content('"x"', ',"prompt_token_ids":null}'),
      content('"x"', '} '),
      content('"tab\there"'),
      content('"unterminated'),
      content('"bad \\q escape"'),
      finish('"x"', 'stop').replace(',"stop_reason":null', ''),
      finish('"x"', 'stop').replace('"stop_reason":null', '"stop_reason":7'),
      finish('"x"', 'stop').replace('"stop_reason":null', '"stop_reason":"</s>"'),
      finish('"x"', 'st\\"op'),
      `${prefix}[]}`,
      `${prefix}[],"usage":{"prompt_tokens":1}, "x":1}`,
      `${prefix}[ ],"usage":null}`,
    ]

    // Act
    const built = others.map((text) => template.usualChunk(text))
    const unlearned = new ChunkTemplate('chatcmpl-gateway', 'served/model').usualChunk(content('"x"'))

    // Assess
    expect(built).toEqual(others.map(() => undefined))
    expect(unlearned).toBeUndefined()
  })
})
