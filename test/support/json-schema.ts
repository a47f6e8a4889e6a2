/**
 * An independent JSON Schema checker for the subset the reference engine enforces, so constrained outputs are
 * validated by code that shares nothing with the grammar compiler. Returns the first problem, or undefined.
 */
type Schema = Record<string, unknown> | boolean

function typeOk(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
    case 'array':
      return Array.isArray(value)
    case 'integer':
      return Number.isInteger(value)
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'null':
      return value === null
    default:
      return typeof value === type
  }
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Validates `value` against `schema` (`root` resolves `$ref`s). */
export function validateJson(value: unknown, schema: Schema, root: Schema = schema, path = '$'): string | undefined {
  if (schema === true) return undefined
  if (schema === false) return `${path}: false schema`
  const s = schema
  if (typeof s.$ref === 'string') {
    const target =
      s.$ref === '#'
        ? root
        : (root as Record<string, Record<string, Schema>>)[s.$ref.split('/')[1] as string]?.[
            s.$ref.split('/')[2] as string
          ]
    return validateJson(value, target as Schema, root, path)
  }
  if ('const' in s && !equal(value, s.const)) return `${path}: not const`
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, value))) return `${path}: not in enum`
  if (Array.isArray(s.anyOf)) {
    if (!s.anyOf.some((sub) => validateJson(value, sub as Schema, root, path) === undefined))
      return `${path}: no anyOf branch`
  }
  if (s.type !== undefined) {
    const types = ([] as unknown[]).concat(s.type).map(String)
    if (!types.some((t) => typeOk(value, t))) return `${path}: expected ${types.join('|')}`
  }
  if (typeof value === 'string') {
    const length = [...value].length
    if (typeof s.minLength === 'number' && length < s.minLength) return `${path}: too short`
    if (typeof s.maxLength === 'number' && length > s.maxLength) return `${path}: too long`
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return `${path}: pattern`
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return `${path}: below minimum`
    if (typeof s.maximum === 'number' && value > s.maximum) return `${path}: above maximum`
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) return `${path}: below exclusiveMinimum`
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return `${path}: above exclusiveMaximum`
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return `${path}: too few items`
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return `${path}: too many items`
    if (s.items !== undefined) {
      for (const [i, item] of value.entries()) {
        const problem = validateJson(item, s.items as Schema, root, `${path}[${i}]`)
        if (problem) return problem
      }
    }
  }
  if (typeOk(value, 'object')) {
    const obj = value as Record<string, unknown>
    const props = (s.properties ?? {}) as Record<string, Schema>
    for (const name of (s.required ?? []) as string[]) if (!(name in obj)) return `${path}: missing ${name}`
    for (const [key, v] of Object.entries(obj)) {
      const sub = key in props ? props[key] : s.additionalProperties
      if (sub === false) return `${path}: unexpected property ${key}`
      if (sub !== undefined) {
        const problem = validateJson(v, sub as Schema, root, `${path}.${key}`)
        if (problem) return problem
      }
    }
  }
  return undefined
}
