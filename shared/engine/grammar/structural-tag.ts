import {
  alt,
  EMPTY,
  type GNode,
  type Grammar,
  lit,
  ref,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'
import { parseGbnf } from '#shared/engine/grammar/gbnf'
import { type JsonLayoutOptions, jsonSchemaGrammar } from '#shared/engine/grammar/json-schema'
import { regexToNode } from '#shared/engine/grammar/regex'
import { Builder, type Pattern } from '#shared/engine/grammar/tag-builder'

/**
 * Structural tags (xgrammar's format, as vLLM passes `response_format: {type: "structural_tag", …}` on): free text
 * until a trigger begins, then one of the tags the trigger starts — its begin, content constrained by its own format,
 * end — then free text again. The new form nests formats (`const_string`, `json_schema`, `grammar`, `regex`,
 * `sequence`, `or`, `tag`, `any_text`, `triggered_tags`, `tags_with_separator`); the legacy form is
 * `{structures: [{begin, schema, end}], triggers}`. Free text is the complement of the triggers, built as an
 * Aho–Corasick automaton whose states are grammar rules.
 */

type Spec = Record<string, unknown>

const MAX_DEPTH = 32

/**
 * A structural tag xgrammar itself refuses (a missing or mistyped field, an unknown format type, a tag no trigger
 * starts): vLLM's request validator answers it before any engine runs (docs/inference.md §3.3, §3.4).
 */
export class InvalidStructuralTagError extends UnsupportedConstraintError {}

function bad(message: string): never {
  throw new InvalidStructuralTagError(`structural_tag: ${message}`)
}

// Valid for xgrammar, but beyond what the reference engine enforces: the engine's own 400.
function unsupported(message: string): never {
  throw new UnsupportedConstraintError(`structural_tag: ${message}`)
}

function text(spec: Spec, key: string): string {
  const value = spec[key]
  if (typeof value !== 'string') bad(`\`${key}\` must be a string`)
  return value
}

function list(spec: Spec, key: string): unknown[] {
  const value = spec[key] ?? []
  if (!Array.isArray(value)) bad(`\`${key}\` must be a list`)
  return value
}

function object(value: unknown, what: string): Spec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad(`${what} must be an object`)
  return value as Spec
}

function format(b: Builder, value: unknown, depth: number): GNode {
  if (depth > MAX_DEPTH) unsupported(`formats nest deeper than ${MAX_DEPTH}`)
  const spec = object(value, 'a format')
  switch (spec.type) {
    case 'const_string':
      return lit(text(spec, 'value'))
    case 'json_schema': {
      if (spec.parsing_type === 'qwen_xml') {
        unsupported("json_schema parsing_type 'qwen_xml' is not supported by the reference engine")
      }
      if (spec.parsing_type !== undefined && spec.parsing_type !== 'json') {
        bad(`json_schema parsing_type '${String(spec.parsing_type)}' is unknown`)
      }
      return b.embed(jsonSchemaGrammar(spec.json_schema ?? {}, b.options), 'json')
    }
    case 'grammar':
      return b.embed(parseGbnf(text(spec, 'grammar')), 'gbnf')
    case 'regex':
      return regexToNode(text(spec, 'pattern'))
    case 'sequence':
      return seq(EMPTY, ...list(spec, 'elements').map((e) => format(b, e, depth + 1)))
    case 'or': {
      const elements = list(spec, 'elements')
      if (elements.length === 0) bad('`or` needs at least one element')
      return alt(...elements.map((e) => format(b, e, depth + 1)))
    }
    case 'tag':
    case undefined:
      return tag(b, spec, 0, depth)
    case 'any_text':
      return b.freeText(excludes(spec), true)
    case 'triggered_tags':
      return triggeredTags(b, spec, depth)
    case 'tags_with_separator':
      return tagsWithSeparator(b, spec, depth)
    case 'qwen_xml_parameter':
      return unsupported("format type 'qwen_xml_parameter' is not supported by the reference engine")
    default:
      return bad(`format type '${String(spec.type)}' is unknown`)
  }
}

function excludes(spec: Spec): Pattern[] {
  return list(spec, 'excludes').map((e) => {
    if (typeof e !== 'string' || e === '') bad('`excludes` must be non-empty strings')
    return { text: e, next: null }
  })
}

// `begin content end`, with the first `skip` characters of `begin` already read (its trigger). Free text as content
// runs until the end string, which it cannot contain.
function tag(b: Builder, spec: Spec, skip: number, depth: number): GNode {
  const begin = text(spec, 'begin').slice(skip)
  const end = text(spec, 'end')
  const content = object(spec.content, 'a tag content')
  if (content.type === 'any_text') {
    if (end === '') bad('a tag with any_text content needs a non-empty end')
    return seq(lit(begin), b.freeText([{ text: end, next: EMPTY }, ...excludes(content)], false))
  }
  return seq(lit(begin), format(b, content, depth + 1), lit(end))
}

function triggeredTags(b: Builder, spec: Spec, depth: number): GNode {
  const triggers = list(spec, 'triggers').map((t) => {
    if (typeof t !== 'string' || t === '') bad('triggers must be non-empty strings')
    return t
  })
  const tags = list(spec, 'tags').map((t) => object(t, 'a tag'))
  if (tags.length === 0) bad('triggered_tags needs at least one tag')
  const byTrigger = new Map<string, Spec[]>(triggers.map((t) => [t, []]))
  for (const t of tags) {
    const begin = text(t, 'begin')
    const starts = triggers.filter((trigger) => begin.startsWith(trigger))
    if (starts.length !== 1) bad(`the tag begin '${begin}' must start with exactly one trigger`)
    byTrigger.get(starts[0] as string)?.push(t)
  }
  const stopAfterFirst = spec.stop_after_first === true
  const again = stopAfterFirst ? EMPTY : ref('')
  const patterns: Pattern[] = triggers.flatMap((trigger) => {
    const own = byTrigger.get(trigger) ?? []
    if (own.length === 0) return []
    return [{ text: trigger, next: seq(alt(...own.map((t) => tag(b, t, trigger.length, depth))), again) }]
  })
  const free = b.freeText([...patterns, ...excludes(spec)], true)
  // After a tag, free text starts over: the same automaton from its first state.
  for (const [name, node] of b.rules) b.rules.set(name, resolve(node, free))
  if (spec.at_least_one !== true) return free
  const first = alt(...tags.map((t) => tag(b, t, 0, depth)))
  return stopAfterFirst ? first : seq(first, free)
}

// Replaces the placeholder reference `ref('')` (free text again, not known until it is built) with `target`.
function resolve(node: GNode, target: GNode): GNode {
  switch (node.t) {
    case 'ref':
      return node.name === '' ? target : node
    case 'seq':
    case 'alt':
      return { t: node.t, items: node.items.map((n) => resolve(n, target)) }
    case 'rep':
      return { ...node, item: resolve(node.item, target) }
    default:
      return node
  }
}

function tagsWithSeparator(b: Builder, spec: Spec, depth: number): GNode {
  const tags = list(spec, 'tags').map((t) => tag(b, object(t, 'a tag'), 0, depth))
  if (tags.length === 0) bad('tags_with_separator needs at least one tag')
  const one = alt(...tags)
  const separator = typeof spec.separator === 'string' ? spec.separator : bad('`separator` must be a string')
  const some =
    spec.stop_after_first === true ? one : seq(one, rep(seq(lit(separator), one), 0, Number.POSITIVE_INFINITY))
  return spec.at_least_one === true ? some : alt(EMPTY, some)
}

/** Compiles a structural tag (new `format` or legacy `structures` + `triggers`, object or JSON text) to a grammar. */
export function structuralTagGrammar(value: unknown, options: JsonLayoutOptions = {}): Grammar {
  let spec = value
  if (typeof value === 'string') {
    try {
      spec = JSON.parse(value)
    } catch {
      bad('the specification is not valid JSON')
    }
  }
  const top = object(spec, 'the specification')
  const b = new Builder(options)
  let root: GNode
  if (top.structures !== undefined) {
    const tags = list(top, 'structures').map((s) => {
      const structure = object(s, 'a structure')
      const schema = structure.schema ?? {}
      return { begin: structure.begin, end: structure.end, content: { type: 'json_schema', json_schema: schema } }
    })
    root = triggeredTags(b, { triggers: top.triggers, tags }, 0)
  } else {
    root = format(b, top.format, 0)
  }
  b.rules.set('root', root)
  return { rules: b.rules, root: 'root' }
}
