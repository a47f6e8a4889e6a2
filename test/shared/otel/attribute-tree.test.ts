import { describe, expect, it } from 'vitest'
import { AttributeConflictError, attributeAt, attributeTree } from '#shared/otel/attribute-tree'

describe('attributeTree', () => {
  it('nests dotted keys and turns 0..n-1 keyed objects into arrays', () => {
    // Act
    const tree = attributeTree([
      ['llm.token_count.prompt', 3],
      ['gen_ai.prompt.0.role', 'user'],
      ['gen_ai.prompt.1.role', 'assistant'],
      ['tags', ['a', 'b']],
      ['odd.1', 'x'],
    ])

    // Assess
    expect(tree).toEqual({
      llm: { token_count: { prompt: 3 } },
      gen_ai: { prompt: [{ role: 'user' }, { role: 'assistant' }] },
      tags: ['a', 'b'],
      odd: { 1: 'x' },
    })
    expect(attributeAt(tree, 'gen_ai.prompt.1.role')).toBe('assistant')
    expect(attributeAt(tree, 'gen_ai.prompt.2.role')).toBeUndefined()
  })

  it('merges a JSON text with dotted keys under it, whichever comes first', () => {
    // Act
    const before = attributeTree([
      ['ai.prompt', '{"system":"Be brief"}'],
      ['ai.prompt.messages', 'hi'],
    ])
    const after = attributeTree([
      ['gen_ai.completion.0.content', 'overridden'],
      ['gen_ai.completion', '[{"role":"assistant","content":"original","extra":true}]'],
    ])

    // Assess
    expect(before).toEqual({ ai: { prompt: { system: 'Be brief', messages: 'hi' } } })
    expect(after).toEqual({ gen_ai: { completion: [{ role: 'assistant', content: 'overridden', extra: true }] } })
  })

  it('refuses a key that is both a plain value and a parent, in either order', () => {
    // Assess
    expect(() =>
      attributeTree([
        ['gen_ai.prompt', true],
        ['gen_ai.prompt.content', 'Hi'],
      ]),
    ).toThrow(AttributeConflictError)
    expect(() =>
      attributeTree([
        ['gen_ai.prompt.content', 'Hi'],
        ['gen_ai.prompt', 'text'],
      ]),
    ).toThrow(/gen_ai\.prompt/)
  })

  it('treats __proto__ and constructor as ordinary keys', () => {
    // Act
    const tree = attributeTree([
      ['__proto__.polluted', 'yes'],
      ['constructor.prototype.x', 1],
    ])

    // Assess
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(JSON.stringify(tree)).toBe('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"x":1}}}')
    expect(attributeAt({}, 'constructor')).toBeUndefined()
  })

  it("parses the values that are JSON text starting with '[' or '{', as Weave's expand_attributes does", () => {
    // Act
    const tree = attributeTree([
      ['object', '{"x":1,"y":[true,null]}'],
      ['list', '[1,"two"]'],
      ['indexed', '{"0":"p","1":"q"}'],
      ['spaced', ' {"x":1}'],
      ['broken', '{"x":'],
      ['quoted', '"text"'],
      ['kvlist', { inner: '{"x":1}' }],
      ['array', ['[1]']],
      ['huge', '[1e400,-1e400]'],
    ])

    // Assess
    expect(tree).toEqual({
      object: { x: 1, y: [true, null] },
      list: [1, 'two'],
      indexed: { 0: 'p', 1: 'q' },
      spaced: ' {"x":1}',
      broken: '{"x":',
      quoted: '"text"',
      kvlist: { inner: '{"x":1}' },
      array: ['[1]'],
      huge: ['inf', '-inf'],
    })
  })

  it('keeps JSON text nesting deeper than 64 levels as text', () => {
    // Prepare
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`

    // Act
    const tree = attributeTree([
      ['ok', nested(64)],
      ['deep', nested(65)],
      ['brackets', `{"s":"${'['.repeat(100)}"}`],
    ])

    // Assess
    expect(JSON.stringify(tree.ok)).toBe(nested(64))
    expect(tree.deep).toBe(nested(65))
    expect(tree.brackets).toEqual({ s: '['.repeat(100) })
  })
})
