import { describe, expect, it } from 'vitest'
import { UnsupportedConstraintError } from '#shared/engine/grammar/ast'
import { Matcher } from '#shared/engine/grammar/matcher'
import { InvalidStructuralTagError, structuralTagGrammar } from '#shared/engine/grammar/structural-tag'
import { ask, complete, text } from './support.js'

const utf8 = new TextEncoder()
const matcher = (spec: unknown) => new Matcher(structuralTagGrammar(spec))
const accepts = (m: Matcher, output: string) => m.matches(utf8.encode(output))

const WEATHER = { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'] }
const FUNCTION_TAGS = {
  type: 'triggered_tags',
  triggers: ['<function='],
  tags: [
    { begin: '<function=weather>', content: { type: 'json_schema', json_schema: WEATHER }, end: '</function>' },
    { begin: '<function=noop>', content: { type: 'const_string', value: '{}' }, end: '</function>' },
  ],
}

describe('structural tags (grammar)', () => {
  it('lets text run free until a trigger, then holds the tag to its begin, schema and end', () => {
    // Prepare
    const m = matcher({ type: 'structural_tag', format: FUNCTION_TAGS })

    // Assess
    expect(accepts(m, '')).toBe(true)
    expect(accepts(m, 'Just text, even <func and <b>tags</b>.')).toBe(true)
    expect(accepts(m, 'Let me check.<function=weather>{"city": "Oslo"}</function> Done.')).toBe(true)
    expect(accepts(m, '<function=noop>{}</function><function=weather>{"city":"Rome"}</function>')).toBe(true)
    expect(accepts(m, '<<function=noop>{}</function>')).toBe(true)
    expect(accepts(m, 'x<function=weather>{"town": "Oslo"}</function>')).toBe(false)
    expect(accepts(m, 'x<function=other>{}</function>')).toBe(false)
    expect(accepts(m, 'x<function=weather>{"city": "Oslo"}')).toBe(false)
    expect(accepts(m, '<function=noop>{}</function')).toBe(false)
  })

  it('reads the legacy structures + triggers form, the schema applying between begin and end', () => {
    // Prepare
    const m = matcher({
      type: 'structural_tag',
      structures: [{ begin: '<tool>', schema: WEATHER, end: '</tool>' }],
      triggers: ['<tool'],
    })

    // Assess
    expect(accepts(m, 'Calling <tool>{"city":"Oslo"}</tool> now')).toBe(true)
    expect(accepts(m, 'Calling <tool>{"city":7}</tool>')).toBe(false)
    expect(accepts(m, 'No <toolbox> here')).toBe(false)
  })

  it('takes the specification as JSON text, as structured_outputs.structural_tag carries it', () => {
    // Prepare
    const m = matcher(JSON.stringify({ type: 'structural_tag', format: { type: 'const_string', value: 'ok' } }))

    // Assess
    expect(accepts(m, 'ok')).toBe(true)
    expect(accepts(m, 'okay')).toBe(false)
  })

  it('honours at_least_one, stop_after_first and excludes', () => {
    // Prepare
    const first = matcher({ format: { ...FUNCTION_TAGS, at_least_one: true } })
    const once = matcher({ format: { ...FUNCTION_TAGS, stop_after_first: true } })
    const excluded = matcher({ format: { ...FUNCTION_TAGS, excludes: ['DROP'] } })

    // Assess
    expect(accepts(first, 'text<function=noop>{}</function>')).toBe(false)
    expect(accepts(first, '<function=noop>{}</function> then text')).toBe(true)
    expect(accepts(once, 'a<function=noop>{}</function>')).toBe(true)
    expect(accepts(once, 'a<function=noop>{}</function>b')).toBe(false)
    expect(accepts(excluded, 'please DROP it')).toBe(false)
    expect(accepts(excluded, 'please D-R-O-P it')).toBe(true)
  })

  it('composes sequence, or, regex, grammar, any_text inside a tag, and tags_with_separator', () => {
    // Prepare
    const m = matcher({
      format: {
        type: 'sequence',
        elements: [
          { type: 'tag', begin: '<think>', content: { type: 'any_text' }, end: '</think>' },
          {
            type: 'or',
            elements: [
              { type: 'regex', pattern: '[0-9]{2}' },
              { type: 'grammar', grammar: 'root ::= "yes"' },
            ],
          },
          {
            type: 'tags_with_separator',
            separator: ',',
            tags: [{ type: 'tag', begin: '[', content: { type: 'const_string', value: 'a' }, end: ']' }],
            at_least_one: true,
          },
        ],
      },
    })

    // Assess
    expect(accepts(m, '<think>a < b, so </thin is fine</think>42[a],[a]')).toBe(true)
    expect(accepts(m, '<think></think>yes[a]')).toBe(true)
    expect(accepts(m, '<think>x</think>42')).toBe(false)
    expect(accepts(m, '<think>x</think></think>42[a]')).toBe(false)
  })

  it('keeps the parser stack flat over long free text (right recursion is a tail call)', () => {
    // Prepare
    const m = matcher({ format: FUNCTION_TAGS })
    const long = `${'free text with <f and <fun bits '.repeat(200)}<function=noop>{}</function>`

    // Act
    const before = m.cachedStates
    const ok = accepts(m, long)

    // Assess: a handful of automaton states, not one per byte.
    expect(ok).toBe(true)
    expect(m.cachedStates - before).toBeLessThan(200)
  })

  it.each([
    [{ format: { type: 'qwen_xml_parameter', json_schema: {} } }, "format type 'qwen_xml_parameter' is not supported"],
    [{ format: { type: 'json_schema', json_schema: {}, parsing_type: 'qwen_xml' } }, "parsing_type 'qwen_xml'"],
  ])('refuses what xgrammar accepts but it cannot enforce: %j', (spec, message) => {
    expect(() => matcher(spec)).toThrow(UnsupportedConstraintError)
    expect(() => matcher(spec)).toThrow(message)
    expect(() => matcher(spec)).not.toThrow(InvalidStructuralTagError)
  })

  it.each([
    [{ format: { ...FUNCTION_TAGS, triggers: ['<tool='] } }, 'must start with exactly one trigger'],
    [{ format: { type: 'nope' } }, "format type 'nope' is unknown"],
    [{ format: { type: 'const_string' } }, '`value` must be a string'],
    [{ structures: [{ begin: '<x>', end: '</x>' }], triggers: [''] }, 'triggers must be non-empty strings'],
    [{ format: { type: 'json_schema', json_schema: {}, parsing_type: 'yaml' } }, "parsing_type 'yaml' is unknown"],
    ['{not json', 'not valid JSON'],
  ])('tells a specification xgrammar refuses apart: %j', (spec, message) => {
    expect(() => matcher(spec)).toThrow(InvalidStructuralTagError)
    expect(() => matcher(spec)).toThrow(message)
  })
})

describe('structural tags (reference engine)', () => {
  it('generates a forced tag whose content follows its schema (response_format, new form)', async () => {
    // Act
    const response = await complete(
      ask('What is the weather in Oslo?', {
        response_format: {
          type: 'structural_tag',
          format: { ...FUNCTION_TAGS, at_least_one: true, stop_after_first: true },
        },
        max_completion_tokens: 80,
        seed: 3,
      }),
    )

    // Assess
    const output = text(response)
    expect(response.choices[0]?.finish_reason).toBe('stop')
    const call = /^<function=(weather|noop)>(.*)<\/function>$/s.exec(output)
    expect(call).not.toBeNull()
    if (call?.[1] === 'weather') expect(JSON.parse(call[2] as string)).toHaveProperty('city')
    else expect(call?.[2]).toBe('{}')
  })

  it('enforces a structured_outputs.structural_tag given as JSON text (legacy form)', async () => {
    // Act
    const response = await complete(
      ask('Say something.', {
        structured_outputs: {
          structural_tag: JSON.stringify({
            type: 'structural_tag',
            structures: [{ begin: '<a>', schema: { const: 1 }, end: '</a>' }],
            triggers: ['<a>'],
          }),
        },
        max_completion_tokens: 60,
        seed: 5,
      }),
    )

    // Assess: whatever the model wrote, it is a complete output of the tag grammar.
    const m = matcher({ structures: [{ begin: '<a>', schema: { const: 1 }, end: '</a>' }], triggers: ['<a>'] })
    expect(response.choices[0]?.finish_reason).toBe('stop')
    expect(accepts(m, text(response))).toBe(true)
  })
})
