// Numbers as Python prints them (`repr`), for digests, exact JSON and error messages that quote a number as Weave's
// and pydantic's Python code does. No imports, so every module that needs them can import them.

/**
 * Formats a number as Python's `repr` would after `json.loads`: integers as digits, other floats in the shortest
 * round-trip form with an exponent when the decimal exponent is below -4 or at least 16 (`1e-05`, `1e+16`).
 */
export function pyNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity'
  // JSON cannot tell 1.0 from 1: a safe integer is taken to be a Python int; beyond 2^53 it can only be a float.
  if (Number.isSafeInteger(value)) return String(value)
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`
  const [mantissa = '', exp = '0'] = value.toExponential().split('e')
  const exponent = Number(exp)
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(value)
}

/** Formats a number as Python's `repr` of a `float` (`101.0`, `99.5`, `1e-05`). */
export function pyFloat(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${Object.is(value, -0) ? '-0' : String(value)}.0`
  return pyNumber(value)
}
