import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonSchemaGrammar } from '#shared/engine/grammar/json-schema'
import { Matcher } from '#shared/engine/grammar/matcher'
import { regexToNode } from '#shared/engine/grammar/regex'
import { BadRequestError } from '#shared/errors/http-error'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { validateJson } from '../../support/json-schema.js'
import { ask, complete, text } from './support.js'

const REGEXES = ['[a-c]+x?', '(ab|cd){1,3}[0-9]', '\\d{3}-\\d{2}', '[^a-z]{2}é+', '(?:yes|no)|maybe\\.', 'a*b+c?']
const SCHEMAS: Record<string, unknown>[] = [
  {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 12 },
      age: { type: 'integer', minimum: 0, maximum: 130 },
      city: { enum: ['Paris', 'Lyon', 'Nice'] },
      tags: { type: 'array', items: { type: 'string', maxLength: 8 }, minItems: 1, maxItems: 3 },
      active: { type: 'boolean' },
    },
    required: ['name', 'age', 'city', 'tags'],
    additionalProperties: false,
  },
  {
    type: 'object',
    properties: {
      id: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
      score: { type: 'number' },
      note: { type: ['string', 'null'] },
    },
    required: ['id', 'score'],
  },
  {
    $defs: {
      point: {
        type: 'object',
        properties: { x: { type: 'integer' }, y: { type: 'integer' } },
        required: ['x', 'y'],
        additionalProperties: false,
      },
    },
    type: 'object',
    properties: {
      points: { type: 'array', items: { $ref: '#/$defs/point' }, maxItems: 4 },
      label: { anyOf: [{ type: 'string', maxLength: 10 }, { type: 'null' }] },
    },
    required: ['points', 'label'],
    additionalProperties: false,
  },
  { type: 'array', items: { type: 'integer', exclusiveMinimum: -5, exclusiveMaximum: 5 }, minItems: 2, maxItems: 5 },
  {
    type: 'object',
    properties: { when: { type: 'string', format: 'date' }, ok: { const: true } },
    required: ['when', 'ok'],
    additionalProperties: false,
  },
]

describe('regex matcher', () => {
  it('accepts exactly the strings the regex matches', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REGEXES),
        fc.string({ unit: fc.constantFrom(...'abcdxy0123456789-é.ABesnoym') }),
        (re, s) => {
          // Prepare
          const matcher = new Matcher({ rules: new Map([['root', regexToNode(re)]]), root: 'root' })

          // Act
          const matched = matcher.matches(new TextEncoder().encode(s))

          // Assess
          expect(matched).toBe(new RegExp(`^(?:${re})$`, 'u').test(s))
        },
      ),
      { numRuns: 300 },
    )
  })
})

const randomRegex = fc
  .array(
    fc.array(
      fc.tuple(
        fc.constantFrom('a', 'b', '[a-c]', '[^b]', '\\d', '.', '(a|bc)', '(?:ab)', 'é', '\\.'),
        fc.constantFrom('', '*', '+', '?', '{1,2}', '{2}'),
      ),
      { minLength: 1, maxLength: 4 },
    ),
    { minLength: 1, maxLength: 2 },
  )
  .map((branches) => branches.map((items) => items.map(([atom, q]) => atom + q).join('')).join('|'))

const utf8 = new TextEncoder()
const regexMatcher = (re: string) => new Matcher({ rules: new Map([['root', regexToNode(re)]]), root: 'root' })

describe('large grammars', () => {
  it('compiles a 10,000-fold repetition of a class of multi-byte characters and enforces its exact length', () => {
    // Prepare
    const exact = `${'é'.repeat(4000)}${'a'.repeat(5999)}€`

    // Act
    const matcher = regexMatcher('[^x]{10000}')

    // Assess
    expect(matcher.initial.dist).toBe(10_000)
    expect(matcher.matches(utf8.encode(exact))).toBe(true)
    expect(matcher.matches(utf8.encode(exact.slice(1)))).toBe(false)
    expect(matcher.matches(utf8.encode(`${exact.slice(1)}x`))).toBe(false)
  })

  it('compiles a long chain of optional items (a deep chain of silent moves)', () => {
    // Act
    const matcher = regexMatcher('(a?){10000}b')

    // Assess
    expect(matcher.initial.dist).toBe(1)
    expect(matcher.matches(utf8.encode('aaab'))).toBe(true)
    expect(matcher.matches(utf8.encode('aaa'))).toBe(false)
  })

  it('constrains a completion to a 1,000-fold repetition of a character class', async () => {
    // Act
    const response = await complete(ask('Write.', { structured_outputs: { regex: '[^x]{1000}' }, seed: 7 }))

    // Assess
    expect(text(response)).toMatch(/^[^x]{1000}$/u)
    expect(response.choices[0]?.finish_reason).toBe('stop')
  })

  it.each([
    ['a repetition of a repetition', '([\\s\\S]{10000}){100}'],
    ['a long sequence of large repetitions', '.{10000}'.repeat(20)],
  ])('refuses %s above the grammar-state limit with a 400 naming the limit', async (_name, regex) => {
    // Act
    const act = complete(ask('x', { structured_outputs: { regex } }))

    // Assess
    await expect(act).rejects.toThrow(BadRequestError)
    await expect(act).rejects.toThrow(/too large: it needs more than 400,000 grammar states/)
  })
})

describe('random regexes', () => {
  it('match exactly what JavaScript regexes match, and constrain generation to them', async () => {
    await fc.assert(
      fc.asyncProperty(
        randomRegex,
        fc.string({ unit: fc.constantFrom(...'abc1é.x\n'), maxLength: 8 }),
        fc.integer(),
        async (re, s, seed) => {
          // Prepare
          const matcher = new Matcher({ rules: new Map([['root', regexToNode(re)]]), root: 'root' })
          const js = new RegExp(`^(?:${re})$`, 'u')

          // Act
          const response = await complete(
            ask('x', { structured_outputs: { regex: re }, seed, max_completion_tokens: 30 }),
          )

          // Assess
          expect(matcher.matches(new TextEncoder().encode(s))).toBe(js.test(s))
          expect(text(response)).toMatch(js)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('constrained decoding', () => {
  it('always produces output matching the regex', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REGEXES), fc.integer(), async (regex, seed) => {
        // Act
        const response = await complete(
          ask('Write something.', { structured_outputs: { regex }, seed, max_completion_tokens: 40 }),
        )

        // Assess
        expect(text(response)).toMatch(new RegExp(`^(?:${regex})$`, 'u'))
        expect(response.choices[0]?.finish_reason).toBe('stop')
      }),
      { numRuns: 30 },
    )
  })

  it('always answers with one of the choices', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        fc.integer(),
        async (choice, seed) => {
          // Act
          const response = await complete(ask('Pick one.', { structured_outputs: { choice }, seed, temperature: 1.5 }))

          // Assess
          expect(choice).toContain(text(response))
        },
      ),
      { numRuns: 30 },
    )
  })

  it('always produces JSON that parses and validates against the schema, even on a tight token budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SCHEMAS),
        fc.integer(),
        fc.integer({ min: 60, max: 200 }),
        async (schema, seed, budget) => {
          // Act
          const response = await complete(
            ask('Reply in JSON.', {
              response_format: { type: 'json_schema', json_schema: { name: 's', schema } },
              seed,
              max_completion_tokens: budget,
            }),
          )

          // Assess
          const value = JSON.parse(text(response))
          expect(validateJson(value, schema as Record<string, unknown>)).toBeUndefined()
          expect(response.choices[0]?.finish_reason).toBe('stop')
        },
      ),
      { numRuns: 40 },
    )
  })

  it('produces a JSON object for json_object, compact when whitespace is disabled', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        // Act
        const response = await complete(
          ask('Describe a city as a JSON object.', {
            structured_outputs: { json_object: true, disable_any_whitespace: true },
            seed,
            max_completion_tokens: 80,
          }),
        )

        // Assess
        const parsed = JSON.parse(text(response))
        expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true)
        expect(text(response).replace(/"(?:[^"\\]|\\.)*"/g, '""')).not.toMatch(/\s/)
      }),
      { numRuns: 15 },
    )
  })

  it('allows unlisted properties unless disable_additional_properties is set', async () => {
    // Prepare
    const json = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }
    const biased = { [String('x'.charCodeAt(0) + 0)]: 0, [String(','.charCodeAt(0))]: 30 }

    // Act
    const open = await complete(
      ask('JSON', { structured_outputs: { json }, logit_bias: biased, temperature: 0, max_completion_tokens: 40 }),
    )
    const closed = await complete(
      ask('JSON', {
        structured_outputs: { json, disable_additional_properties: true },
        logit_bias: biased,
        temperature: 0,
        max_completion_tokens: 40,
      }),
    )

    // Assess
    expect(Object.keys(JSON.parse(text(open))).length).toBeGreaterThan(1)
    expect(Object.keys(JSON.parse(text(closed)))).toEqual(['a'])
  })

  it('constrains every beam and every sampled choice', async () => {
    // Prepare
    const choice = ['north', 'south', 'east', 'west']

    // Act
    const beams = await complete(ask('Which way?', { structured_outputs: { choice }, use_beam_search: true, n: 3 }))
    const sampled = await complete(ask('Which way?', { structured_outputs: { choice }, n: 4, seed: 2, temperature: 2 }))

    // Assess
    expect(beams.choices).toHaveLength(3)
    expect(new Set(beams.choices.map((c) => c.message.content)).size).toBe(3)
    for (const c of [...beams.choices, ...sampled.choices]) expect(choice).toContain(c.message.content)
  })

  it('follows a whitespace_pattern between JSON tokens', async () => {
    // Act
    const response = await complete(
      ask('JSON', {
        structured_outputs: {
          json: { type: 'array', items: { type: 'boolean' }, minItems: 2, maxItems: 2 },
          whitespace_pattern: '  ',
        },
        seed: 1,
      }),
    )

    // Assess
    expect(text(response)).toMatch(/^\[ {2}(true|false) {2}, {2}(true|false) {2}\]$/)
  })

  it('follows a GBNF grammar', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        // Prepare
        const grammar =
          'root ::= greeting " " name "!"\ngreeting ::= "hello" | "hi"\nname ::= [A-Z] [a-z]{1,8} # a capitalised name'

        // Act
        const response = await complete(ask('Greet.', { structured_outputs: { grammar }, seed }))

        // Assess
        expect(text(response)).toMatch(/^(hello|hi) [A-Z][a-z]{1,8}!$/)
      }),
      { numRuns: 15 },
    )
  })

  it('narrows integer bounds wider than 15 digits (zod .int() writes ±(2^53−1)) and keeps them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        // Prepare
        const json = {
          type: 'array',
          items: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
          minItems: 3,
          maxItems: 3,
        }
        const above = { type: 'integer', minimum: 1e16 }

        // Act
        const response = await complete(ask('Three numbers.', { structured_outputs: { json }, seed }))
        const fromAbove = complete(ask('x', { structured_outputs: { json: above } }))

        // Assess
        const values = JSON.parse(text(response)) as number[]
        expect(values).toHaveLength(3)
        for (const v of values) expect(Number.isSafeInteger(v)).toBe(true)
        await expect(fromAbove).rejects.toThrow('Numeric bounds beyond 15 digits are not supported')
      }),
      { numRuns: 5 },
    )
  })

  it('writes decimals within decimal bounds (what zod .min(0.1).max(0.9) emits)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        // Prepare
        const json = {
          type: 'object',
          properties: {
            p: { type: 'number', minimum: 0.2, maximum: 0.8 },
            q: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.05 },
          },
          required: ['p', 'q'],
          additionalProperties: false,
        }

        // Act
        const response = await complete(ask('Two probabilities.', { structured_outputs: { json }, seed }))

        // Assess
        expect(validateJson(JSON.parse(text(response)), json)).toBeUndefined()
        expect(response.choices[0]?.finish_reason).toBe('stop')
      }),
      { numRuns: 10 },
    )
  })

  it('accepts exactly the numerals with up to 6 decimals inside decimal bounds', () => {
    const numeral = fc
      .tuple(fc.boolean(), fc.nat(3), fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 6 }))
      .map(([negative, int, frac]) => `${negative ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`)
      .filter((s) => Number(s) !== 0 || !s.startsWith('-'))
    fc.assert(
      fc.property(
        fc.integer({ min: -3000, max: 3000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.boolean(),
        numeral,
        (from, width, exclusive, s) => {
          // Prepare
          const [lo, hi] = [from / 1000, (from + width) / 1000]
          const schema = exclusive
            ? { type: 'number', exclusiveMinimum: lo, exclusiveMaximum: hi }
            : { type: 'number', minimum: lo, maximum: hi }
          const value = Number(s)

          // Act
          const accepted = new Matcher(jsonSchemaGrammar(schema)).matches(utf8.encode(s))

          // Assess
          expect(accepted).toBe(exclusive ? value > lo && value < hi : value >= lo && value <= hi)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('enforces the pattern of a string that also names a format, and an http(s) uri', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        // Prepare
        const json = {
          type: 'object',
          properties: {
            code: { type: 'string', format: 'email', pattern: '^ab[0-9]{2}$' },
            link: { type: 'string', format: 'uri' },
          },
          required: ['code', 'link'],
          additionalProperties: false,
        }

        // Act
        const response = await complete(ask('Code and link.', { structured_outputs: { json }, seed }))

        // Assess
        const value = JSON.parse(text(response)) as { code: string; link: string }
        expect(value.code).toMatch(/^ab[0-9]{2}$/)
        expect(new URL(value.link).protocol).toMatch(/^https?:$/)
      }),
      { numRuns: 10 },
    )
  })

  it.each([
    ['a lookahead regex', { regex: 'a(?=b)' }, 'lookaround'],
    ['a back-reference', { regex: '(a)\\1' }, 'escape \\1'],
    ['an unsupported keyword', { json: { type: 'object', not: { required: ['a'] } } }, 'keyword `not`'],
    ['an unknown format', { json: { type: 'string', format: 'hostname' } }, 'format `hostname`'],
    ['a left-recursive grammar', { grammar: 'root ::= root "a" | "b"' }, 'Left-recursive'],
    ['two kinds of constraint', { regex: 'a', choice: ['b'] }, 'only use one kind'],
    [
      'an integer with no integer between its decimal bounds',
      { json: { type: 'object', properties: { share: { type: 'integer', minimum: 0.2, maximum: 0.8 } } } },
      'No integer lies within the bounds of #/properties/share (minimum 0.2, maximum 0.8)',
    ],
    [
      'a number with no 6-decimal numeral between its bounds',
      { json: { type: 'number', exclusiveMinimum: 0.1, exclusiveMaximum: 0.1000001 } },
      'No number with at most 6 decimals lies within the bounds of # (exclusiveMinimum 0.1, exclusiveMaximum 0.1000001)',
    ],
  ])('refuses %s with a 400 instead of decoding unconstrained', async (_name, structured_outputs, message) => {
    // Act
    const act = complete(ask('x', { structured_outputs }))

    // Assess
    await expect(act).rejects.toThrow(BadRequestError)
    await expect(act).rejects.toThrow(message)
  })

  it.each([
    [
      'a response_format adding a second kind',
      { response_format: { type: 'json_object' }, structured_outputs: { regex: 'a' } },
      "You can only use one kind of structured outputs constraint but multiple are specified: {'json': None, 'regex': 'a', 'choice': None, 'grammar': None, 'json_object': True, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}",
    ],
    [
      'two kinds in structured_outputs',
      { structured_outputs: { grammar: 'root ::= "a"', choice: ['b'] } },
      `You can only use one kind of structured outputs constraint but multiple are specified: {'json': None, 'regex': None, 'choice': ['b'], 'grammar': 'root ::= "a"', 'json_object': None, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}`,
    ],
    [
      'structured_outputs without a constraint',
      { structured_outputs: { disable_any_whitespace: true } },
      "You must use one kind of structured outputs constraint but none are specified: {'json': None, 'regex': None, 'choice': None, 'grammar': None, 'json_object': None, 'disable_any_whitespace': True, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}",
    ],
  ])(
    "refuses %s with newest vLLM's StructuredOutputsParams message and no parameter",
    async (_name, extra, message) => {
      // Act
      const act = complete(ask('x', extra as Partial<ChatCompletionRequest>))

      // Assess
      await expect(act).rejects.toThrow(BadRequestError)
      await expect(act).rejects.toMatchObject({ statusCode: 400, message, param: undefined })
    },
  )
})
