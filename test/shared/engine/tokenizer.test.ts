import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Detokenizer, decode, EOS_TOKEN_ID, encode, SPECIAL_TOKENS, TOKEN, VOCAB_SIZE } from '#shared/engine/tokenizer'

describe('tokenizer', () => {
  it('reports a vocabulary of 256 bytes plus the special tokens with stable ids', () => {
    // Prepare
    const ids = SPECIAL_TOKENS.map((t) => encode(t)[0])

    // Act
    const size = VOCAB_SIZE

    // Assess
    expect(size).toBe(262)
    expect(ids).toEqual([256, 257, 258, 259, 260, 261])
    expect(EOS_TOKEN_ID).toBe(TOKEN.imEnd)
  })

  it('round-trips any text through bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        // Act
        const ids = encode(text)

        // Assess
        expect(decode(ids)).toBe(text)
        expect(ids.every((id) => id < 256)).toBe(true)
      }),
    )
  })

  it('maps special-token strings to their ids and prepends bos with add_special_tokens', () => {
    // Act
    const ids = encode('<|im_start|>user\nhi<|im_end|>', true)

    // Assess
    expect(ids).toEqual([TOKEN.bos, TOKEN.imStart, ...encode('user\nhi'), TOKEN.imEnd])
  })

  it('skips special tokens by default and spaces them when asked not to skip', () => {
    // Prepare
    const ids = [...encode('Hi'), TOKEN.imEnd, ...encode('there')]

    // Act
    const skipped = decode(ids)
    const spaced = decode(ids, { skipSpecialTokens: false })
    const tight = decode(ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false })

    // Assess
    expect(skipped).toBe('Hithere')
    expect(spaced).toBe('Hi <|im_end|> there')
    expect(tight).toBe('Hi<|im_end|>there')
  })

  it('holds back incomplete UTF-8 sequences while streaming', () => {
    // Prepare
    const detok = new Detokenizer()
    const bytes = encode('é!')

    // Act
    const parts = bytes.map((b) => detok.push(b))

    // Assess
    expect(parts).toEqual(['', 'é', '!'])
  })

  it('forks a detokenizer mid-character into two that each decode their own continuation', () => {
    const ids = fc.array(fc.oneof(fc.integer({ min: 0, max: VOCAB_SIZE - 1 }), fc.constantFrom(0xc3, 0xe2, 0x82, 0xa9)))
    fc.assert(
      fc.property(ids, ids, ids, fc.boolean(), (prefix, left, right, skipSpecialTokens) => {
        // Prepare
        const options = { skipSpecialTokens }
        const original = new Detokenizer(options)
        const head = prefix.map((id) => original.push(id)).join('')

        // Act
        const copy = original.fork()
        const decodedLeft = head + left.map((id) => original.push(id)).join('') + original.flush()
        const decodedRight = head + right.map((id) => copy.push(id)).join('') + copy.flush()

        // Assess
        expect(decodedLeft).toBe(decode([...prefix, ...left], options))
        expect(decodedRight).toBe(decode([...prefix, ...right], options))
      }),
    )
  })
})
