import { BadRequestError } from '#shared/errors/http-error'
import { BUILTIN_CLASS_MODELS, UNMODELLED_BUILTIN_CLASSES } from '#shared/schemas/builtin-object-class'
import { formatValidationError, validateModel } from '#shared/schemas/pydantic-model'

type Json = Record<string, unknown>

// Class instances (the exact-number wrappers of json-exact) are numbers here, not objects.
const isPlainObject = (v: unknown): v is Json =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(v))

/** Weave's `get_type(val)`. */
export function weaveType(val: unknown): string {
  if (val === null || val === undefined) return 'none'
  if (isPlainObject(val)) {
    if ('_type' in val) {
      const wt = val.weave_type
      if (isPlainObject(wt) && 'type' in wt) return String(wt.type)
      return String(val._type)
    }
    return 'dict'
  }
  if (Array.isArray(val)) return 'list'
  return 'unknown'
}

/** `op` when the value is an Op, else `object`. */
export function objectKind(val: unknown): 'op' | 'object' {
  return weaveType(val) === 'Op' ? 'op' : 'object'
}

/** Base and leaf object classes from `_bases` / `_class_name` (docs/tracing.md §8.2), both null without class info. */
export function objectClasses(val: unknown): { base: string | null; leaf: string | null } {
  if (!isPlainObject(val) || !Array.isArray(val._bases)) return { base: null, leaf: null }
  const bases = val._bases
  const n = bases.length
  if (n < 2 || bases[n - 1] !== 'BaseModel' || !['Object', 'BaseObject'].includes(bases[n - 2] as string)) {
    return { base: null, leaf: null }
  }
  const leaf = typeof val._class_name === 'string' ? val._class_name : null
  return { base: n > 2 ? String(bases[n - 3]) : leaf, leaf }
}

function checkFileKeys(val: unknown): void {
  if (Array.isArray(val)) {
    for (const v of val) checkFileKeys(v)
    return
  }
  if (!isPlainObject(val)) return
  if (val._type === 'CustomWeaveType' && isPlainObject(val.files)) {
    for (const key of Object.keys(val.files)) {
      if (key.startsWith('/') || /^[A-Za-z]:[\\/]/.test(key) || key.split(/[\\/]/).includes('..')) {
        throw new BadRequestError('Invalid file path key')
      }
    }
  }
  for (const v of Object.values(val)) checkFileKeys(v)
}

/**
 * Weave's `process_incoming_object_val` (docs/tracing.md §8.2): checks a requested built-in class against the value's
 * own class info; a value without class info is validated by the class model and stored as its dump (defaults filled,
 * class annotations added), so the digest is that of the normalised value. Throws 400 with Weave's messages.
 */
export function processIncomingVal(val: unknown, builtinClass: string | null): unknown {
  checkFileKeys(val)
  if (builtinClass === null) return val
  if (!isPlainObject(val)) throw new BadRequestError('object_class cannot be provided for non-dict objects')
  const detected = objectClasses(val).leaf
  if (detected !== null) {
    if (detected !== builtinClass) {
      throw new BadRequestError(`object_class must match val's defined object class: ${detected} != ${builtinClass}`)
    }
    return val
  }
  const model = BUILTIN_CLASS_MODELS.get(builtinClass)
  if (model !== undefined) {
    const result = validateModel(model, val)
    // pydantic's ValidationError is a ValueError: the server answers it with 400 and its text.
    if ('errors' in result) throw new BadRequestError(formatValidationError(model.name, result.errors))
    return result.val
  }
  if (!UNMODELLED_BUILTIN_CLASSES.has(builtinClass)) throw new BadRequestError(`Unknown object class: ${builtinClass}`)
  return { ...val, _type: builtinClass, _class_name: builtinClass, _bases: ['BaseObject', 'BaseModel'] }
}
