import fc from 'fast-check'

/** Strings that break naive handling: graphemes, binary, NUL, lone surrogates, path tricks, very long text. */
export const ODD_STRINGS = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\uD800', '\uFFFF', '../../etc/passwd', 'a/b/c', '/', '%00', '💥'.repeat(500)),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'x'.repeat(n)),
)

/** Numbers at the edges of JSON, JavaScript and 64-bit integers. */
export const HUGE_NUMBERS = fc.constantFrom(
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_VALUE,
  Number.MAX_VALUE,
  1e308,
  -0,
  Number.MIN_VALUE,
  2 ** 31,
  -(2 ** 63),
)

/** Any JSON value, including odd strings and huge numbers at the leaves. */
export const ANY_VALUE: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  ODD_STRINGS,
  HUGE_NUMBERS,
  fc.constantFrom(null, true, [], {}),
)

/** JSON text nested deeper than any schema expects (arrays or objects, up to a few thousand levels). */
export const DEEP = fc
  .integer({ min: 50, max: 3_000 })
  .chain((depth) =>
    fc
      .boolean()
      .map((arrays) =>
        arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
      ),
  )
