import {
  alt,
  byteSet,
  bytes,
  EMPTY,
  type GNode,
  lit,
  opt,
  ref,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'

/**
 * Grammar pieces for JSON numbers: any numeral, and the numerals inside a schema's `minimum`/`maximum`/`exclusive*`
 * bounds. A bounded `integer` is an integer in range; a bounded `number` is an integer or a decimal with at most
 * `MAX_DECIMALS` decimals in range, so `{minimum: 0.2, maximum: 0.8}` (zod's `.min(0.2).max(0.8)`) gives 0.25.
 */

const DIGIT = bytes(byteSet([0x30, 0x39]))
const NONZERO = bytes(byteSet([0x31, 0x39]))
// Longer numerals parse to imprecise or infinite numbers, which then fail `integer` checks.
const MAX_DIGITS = 15
const LIMIT = 10 ** MAX_DIGITS - 1

/** Most decimals a bounded `number` is written with. */
export const MAX_DECIMALS = 6

/** Any JSON number (bounded digit counts). */
export function jsonNumber(): GNode {
  const int = seq(opt(lit('-')), alt(lit('0'), seq(NONZERO, rep(DIGIT, 0, MAX_DIGITS - 1))))
  const frac = opt(seq(lit('.'), rep(DIGIT, 1, MAX_DIGITS)))
  const exp = opt(
    seq(bytes(byteSet([0x45, 0x45], [0x65, 0x65])), opt(bytes(byteSet([0x2b, 0x2b], [0x2d, 0x2d]))), rep(DIGIT, 1, 2)),
  )
  return seq(int, frac, exp)
}

// `n` free digits, with the decimal point before the last `places` of them when it falls among them.
function digits(n: number, places: number): GNode {
  if (places === 0 || n <= places) return rep(DIGIT, n, n)
  return seq(rep(DIGIT, n - places, n - places), lit('.'), rep(DIGIT, places, places))
}

// The digit strings from `lo` to `hi` (equal lengths), with the decimal point before the last `places` digits.
function fixedWidth(lo: string, hi: string, places: number): GNode {
  if (lo.length === 0) return EMPTY
  const rest = lo.length - 1
  const [l, h] = [lo.charCodeAt(0), hi.charCodeAt(0)]
  const digit = (a: number, b: number) => seq(bytes(byteSet([a, b])), places > 0 && rest === places ? lit('.') : EMPTY)
  if (l === h) return seq(digit(l, l), fixedWidth(lo.slice(1), hi.slice(1), places))
  if (/^0*$/.test(lo.slice(1)) && /^9*$/.test(hi.slice(1))) return seq(digit(l, h), digits(rest, places))
  const items = [seq(digit(l, l), fixedWidth(lo.slice(1), '9'.repeat(rest), places))]
  if (l + 1 <= h - 1) items.push(seq(digit(l + 1, h - 1), digits(rest, places)))
  items.push(seq(digit(h, h), fixedWidth('0'.repeat(rest), hi.slice(1), places)))
  return alt(...items)
}

// The numerals m / 10^places for the integers m in [a, b] (a ≥ 0, b may be Infinity): at least places + 1 digits,
// zero-padded only up to that (0.05), never another leading zero.
function naturalRange(a: number, b: number, places: number): GNode {
  const shortest = places + 1
  const first = Math.max(String(a).length, shortest)
  const top = b === Number.POSITIVE_INFINITY ? 10 ** first - 1 : b
  const items: GNode[] = []
  for (let d = first; d <= Math.max(String(top).length, shortest); d++) {
    const lo = Math.max(a, d === shortest ? 0 : 10 ** (d - 1))
    const hi = Math.min(top, 10 ** d - 1)
    if (lo <= hi) items.push(fixedWidth(String(lo).padStart(d, '0'), String(hi).padStart(d, '0'), places))
  }
  if (b === Number.POSITIVE_INFINITY && first < MAX_DIGITS) {
    const point = places > 0 ? seq(lit('.'), rep(DIGIT, places, places)) : EMPTY
    items.push(seq(NONZERO, rep(DIGIT, first - places, MAX_DIGITS - 1 - places), point))
  }
  return alt(...items)
}

/**
 * The numerals m / 10^places, written with exactly `places` decimals, for the integers m in [from, to] (either bound
 * may be infinite); undefined when no such m has at most 15 digits.
 */
export function scaledRange(from: number, to: number, places = 0): GNode | undefined {
  // Numerals are written with at most 15 digits (exact as doubles); a wider bound, such as the ±(2^53−1) of zod's
  // `.int()`, is narrowed to them: every output still lies inside the schema's range.
  const lo = Number.isFinite(from) ? Math.max(from, -LIMIT) : from
  const hi = Number.isFinite(to) ? Math.min(to, LIMIT) : to
  if (lo > hi || lo > LIMIT || hi < -LIMIT) return undefined
  const items: GNode[] = []
  if (lo <= -1) {
    const negative = naturalRange(
      Math.max(-hi, 1),
      lo === Number.NEGATIVE_INFINITY ? Number.POSITIVE_INFINITY : -lo,
      places,
    )
    items.push(seq(lit('-'), negative))
  }
  if (hi >= 0) items.push(naturalRange(Math.max(lo, 0), hi, places))
  return alt(...items)
}

// x · 10^places rounded down or up, computed on x's shortest decimal form: in binary, 0.07 · 100 is
// 7.000000000000001, whose ceiling would wrongly exclude the bound itself.
function scaled(x: number, places: number, round: 'floor' | 'ceil'): number {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x))
  if (!m) return x
  const [, sign, int, frac = '', exp = '0'] = m
  const shift = Number(exp) - frac.length + places
  const digits = BigInt(`${int}${frac}`)
  const scale = 10n ** BigInt(Math.abs(shift))
  const whole = shift >= 0 ? digits * scale : digits / scale
  const inexact = shift < 0 && digits % scale !== 0n
  const magnitude = Number(inexact && (round === 'ceil') === (sign === '') ? whole + 1n : whole)
  return sign === '-' ? -magnitude : magnitude
}

/** The numerals a schema's numeric bounds allow, or `type`'s rule itself when it has none. */
export function boundedNumber(type: 'integer' | 'number', s: Record<string, unknown>, path: string): GNode {
  const keys = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].filter((k) => typeof s[k] === 'number')
  if (keys.length === 0) return ref(type)
  // Draft 4 writes an exclusive bound as `exclusiveMinimum: true` beside `minimum`.
  const lower: [number, boolean][] = []
  const upper: [number, boolean][] = []
  if (typeof s.minimum === 'number') lower.push([s.minimum, s.exclusiveMinimum === true])
  if (typeof s.exclusiveMinimum === 'number') lower.push([s.exclusiveMinimum, true])
  if (typeof s.maximum === 'number') upper.push([s.maximum, s.exclusiveMaximum === true])
  if (typeof s.exclusiveMaximum === 'number') upper.push([s.exclusiveMaximum, true])
  const scaledBounds = (places: number) => [
    Math.max(-Infinity, ...lower.map(([x, ex]) => (ex ? scaled(x, places, 'floor') + 1 : scaled(x, places, 'ceil')))),
    Math.min(Infinity, ...upper.map(([x, ex]) => (ex ? scaled(x, places, 'ceil') - 1 : scaled(x, places, 'floor')))),
  ]
  const ranges: GNode[] = []
  for (let places = 0; places <= (type === 'integer' ? 0 : MAX_DECIMALS); places++) {
    const [from, to] = scaledBounds(places) as [number, number]
    const range = scaledRange(from, to, places)
    if (range) ranges.push(range)
  }
  if (ranges.length > 0) return alt(...ranges)
  const bounds = `${path} (${keys.map((k) => `${k} ${s[k]}`).join(', ')})`
  const [from, to] = scaledBounds(0) as [number, number]
  if (from > LIMIT || to < -LIMIT)
    throw new UnsupportedConstraintError(`Numeric bounds beyond 15 digits are not supported: ${bounds}`)
  const what = type === 'integer' ? 'integer' : `number with at most ${MAX_DECIMALS} decimals`
  throw new UnsupportedConstraintError(`No ${what} lies within the bounds of ${bounds}`)
}
