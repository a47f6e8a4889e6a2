/** The JSON Schema vocabulary the grammar compiler knows: ignored annotations, enforced keywords, type helpers. */

/** Keywords that only annotate a schema; the compiler ignores them. */
export const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  '$comment',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$defs',
  'definitions',
  'strict',
])
/** Keywords the compiler enforces; any other non-annotation keyword is refused. */
export const SUPPORTED = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'allOf',
  '$ref',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
])

/** Whether a JSON value has a JSON Schema type. */
export function matchesType(value: unknown, type: string): boolean {
  if (type === 'integer') return Number.isInteger(value)
  if (type === 'number') return typeof value === 'number'
  if (type === 'null') return value === null
  if (type === 'array') return Array.isArray(value)
  if (type === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value)
  return typeof value === type
}

/** The type a schema without `type` implies from its keywords (`any` when none does). */
export function inferType(s: Record<string, unknown>): string {
  if (s.properties !== undefined || s.required !== undefined || s.additionalProperties !== undefined) return 'object'
  if (s.items !== undefined || s.minItems !== undefined || s.maxItems !== undefined) return 'array'
  if (s.pattern !== undefined || s.minLength !== undefined || s.maxLength !== undefined || s.format !== undefined)
    return 'string'
  if (s.minimum !== undefined || s.maximum !== undefined) return 'number'
  return 'any'
}
