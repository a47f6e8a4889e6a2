import { type AttrValue, doubleValue, type KeyValues, MAX_VALUE_DEPTH } from '#shared/otel/otlp-model'

/**
 * Span attributes as the reference reads them: dotted keys become nested objects (`llm.token_count.prompt` →
 * `{llm: {token_count: {prompt}}}`), objects whose keys are exactly `0..n-1` become arrays (`gen_ai.prompt.0.role` →
 * `{gen_ai: {prompt: [{role}]}}`), and a value that is JSON text starting with `[` or `{` is parsed, as Weave's
 * `expand_attributes` does, so dotted keys can extend it (`ai.prompt` = `'{"system": …}'` plus `ai.prompt.messages`). A key that is both a plain value and the parent of other keys
 * (`gen_ai.prompt` = `true` plus `gen_ai.prompt.content`) has no tree form: `AttributeConflictError`.
 */

/** A nested attribute tree. */
export type AttrTree = { [key: string]: AttrValue }

/** Two attributes need the same path to be both a value and an object. */
export class AttributeConflictError extends Error {}

const isTree = (v: unknown): v is AttrTree => typeof v === 'object' && v !== null && !Array.isArray(v)

// Own keys only, and written as data properties: a key such as `__proto__` or `constructor` is an ordinary name here.
const own = (node: AttrTree, key: string): AttrValue | undefined => (Object.hasOwn(node, key) ? node[key] : undefined)
function put(node: AttrTree, key: string, value: AttrValue): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true })
}

// Nesting of a JSON text, counted without parsing it (brackets inside strings skipped); stops past the limit.
function nestsTooDeep(text: string): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_VALUE_DEPTH) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

// A number literal past the double range parses as an infinity; stored as the reference's `to_json_serializable` does.
const OVERFLOW_RE = /[eE]\+?\d{3}|\d{309}/
const finite = (_key: string, v: unknown) => (typeof v === 'number' ? doubleValue(v) : v)

// Objects and arrays parsed from JSON text and not addressed by dotted keys since: they stay as parsed (`"0"`, `"1"`
// keys included), since only dotted keys make lists.
const PARSED = new WeakSet<object>()
function markParsed(value: AttrValue): void {
  if (typeof value !== 'object' || value === null) return
  PARSED.add(value)
  for (const v of Array.isArray(value) ? value : Object.values(value)) markParsed(v)
}

/**
 * A JSON object or array held as text (leading whitespace allowed), parsed; undefined for anything else, for text
 * that does not parse, and for text nesting deeper than the attribute values may (`MAX_VALUE_DEPTH`).
 */
export function parseJsonText(value: unknown): AttrValue | undefined {
  if (typeof value !== 'string') return undefined
  const first = value.trimStart()[0]
  if (first !== '{' && first !== '[') return undefined
  if (nestsTooDeep(value)) return undefined
  try {
    const parsed = JSON.parse(value, OVERFLOW_RE.test(value) ? finite : undefined) as AttrValue
    markParsed(parsed)
    return parsed
  } catch {
    return undefined
  }
}

/**
 * An attribute value as Weave's `expand_attributes` reads it: a string whose first character is `[` or `{` is parsed
 * when it is JSON (else kept); strings inside arrays and key/value lists are not.
 */
export function expandValue(value: AttrValue): AttrValue {
  if (typeof value !== 'string' || (value[0] !== '[' && value[0] !== '{')) return value
  return parseJsonText(value) ?? value
}

// Arrays as index-keyed objects while the tree is built, so dotted keys can address their elements.
function asTree(value: AttrValue | undefined): AttrTree | undefined {
  if (isTree(value)) {
    PARSED.delete(value)
    return value
  }
  if (Array.isArray(value)) return Object.fromEntries(value.map((v, i) => [String(i), v]))
  const parsed = parseJsonText(value)
  return parsed === undefined ? undefined : asTree(parsed)
}

function mergeInto(target: AttrTree, source: AttrTree): void {
  for (const [k, v] of Object.entries(source)) {
    const existing = own(target, k)
    const a = asTree(existing)
    const b = isTree(v) || Array.isArray(v) ? asTree(v) : undefined
    if (existing === undefined) put(target, k, v)
    else if (a !== undefined && b !== undefined) {
      mergeInto(a, b)
      put(target, k, a)
    }
    // Otherwise the key set first (a dotted leaf) wins over the text's value.
  }
}

function conflict(path: string): never {
  throw new AttributeConflictError(
    `Invalid attribute structure: '${path}' is both a value and the parent of other attributes. ` +
      'Do not send a key together with keys nested under it (e.g. `gen_ai.prompt` and `gen_ai.prompt.content`).',
  )
}

function setPath(root: AttrTree, key: string, value: AttrValue): void {
  const parts = key.split('.')
  let node = root
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i] as string
    const child = own(node, part)
    if (child === undefined || child === null) {
      const next: AttrTree = {}
      put(node, part, next)
      node = next
      continue
    }
    const tree = asTree(child)
    if (tree === undefined) conflict(parts.slice(0, i + 1).join('.'))
    put(node, part, tree)
    node = tree
  }
  const leaf = parts[parts.length - 1] as string
  const existing = own(node, leaf)
  if (existing === undefined || existing === null) {
    put(node, leaf, value)
    return
  }
  const a = asTree(existing)
  const b = asTree(value)
  if (isTree(existing) && b !== undefined) {
    // Nested keys came first: the text fills in what they did not set.
    PARSED.delete(existing)
    mergeInto(existing, b)
    return
  }
  if (a !== undefined && b !== undefined) {
    mergeInto(b, a)
    put(node, leaf, b)
    return
  }
  if (isTree(existing) || isTree(value)) conflict(key)
  put(node, leaf, value)
}

// `{"0": a, "1": b}` → `[a, b]`, recursively; other objects keep their keys.
function listify(value: AttrValue): AttrValue {
  if (typeof value === 'object' && value !== null && PARSED.has(value)) return value
  if (Array.isArray(value)) return value.map(listify)
  if (!isTree(value)) return value
  const keys = Object.keys(value)
  for (const k of keys) put(value, k, listify(value[k] as AttrValue))
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => value[k] as AttrValue)
  return value
}

/** Builds the nested tree of a span's (or resource's, scope's, event's) attributes. */
export function attributeTree(pairs: KeyValues): AttrTree {
  const root: AttrTree = {}
  for (const [key, value] of pairs) setPath(root, key, expandValue(value))
  for (const k of Object.keys(root)) put(root, k, listify(root[k] as AttrValue))
  return root
}

// The convention tables look the same few dozen paths up in every span: split each once.
const SEGMENTS = new Map<string, string[]>()
function segments(path: string): string[] {
  let parts = SEGMENTS.get(path)
  if (parts === undefined) {
    parts = path.split('.')
    if (SEGMENTS.size < 1024) SEGMENTS.set(path, parts)
  }
  return parts
}

/** The value at a dotted path of a tree (array elements by index); undefined when absent. */
export function attributeAt(tree: AttrTree, path: string): AttrValue | undefined {
  let node: AttrValue | undefined = tree
  for (const part of segments(path)) {
    if (isTree(node)) node = own(node, part)
    else if (Array.isArray(node) && /^\d+$/.test(part)) node = node[Number(part)]
    else return undefined
    if (node === undefined) return undefined
  }
  return node
}
