import { describe, expect, it } from 'vitest'
import { shortenName } from '#shared/otel/shorten-name'

// Expected values computed with Weave's `shorten_name` (weave/trace_server/opentelemetry/helpers.py).
describe('shortenName', () => {
  it("gives Weave's docstring examples (its 'verylo...' is a typo: the code gives 'veryl...')", () => {
    // Assess
    expect(shortenName('hello/world.txt', 10)).toBe('hello/...')
    expect(shortenName('hello/world.txt', 10, '...', false)).toBe('hello...')
    expect(shortenName('hello/world.txt', 20)).toBe('hello/world.txt')
    expect(shortenName('verylongword', 8)).toBe('veryl...')
    expect(shortenName('hello/world.txt', 10, ':1234', false)).toBe('hello:1234')
  })

  it('keeps names up to the limit, cuts at the last delimiter that fits and counts code points', () => {
    // Assess
    expect(shortenName('x'.repeat(10), 10)).toBe('x'.repeat(10))
    expect(shortenName('a.b.c.d.e.f.g.h', 9)).toBe('a.b.c...')
    expect(shortenName('a, b, c, d, e', 8)).toBe('a, ...')
    expect(shortenName('/abcdefghij', 6)).toBe('/...')
    expect(shortenName('ab...cd...ef', 7)).toBe('ab...')
    expect(shortenName(`xxxxx${'é'.repeat(10)}`, 8)).toBe('xxxxx...')
    expect(shortenName('😀'.repeat(10), 10)).toBe('😀'.repeat(10))
  })

  it('cuts a name that ends in delimiters (where Weave fails) as if another part followed', () => {
    // Assess: Weave gives 'ab          ...' for 'ab          cd'
    expect(shortenName(`ab${' '.repeat(10)}`, 5)).toBe(`ab${' '.repeat(10)}...`)
    expect(shortenName(`ab${' '.repeat(10)}cd`, 5)).toBe(`ab${' '.repeat(10)}...`)
  })
})
