import {
  alt,
  EMPTY,
  type GNode,
  type Grammar,
  lit,
  opt,
  ref,
  rep,
  seq,
  UnsupportedConstraintError,
} from '#shared/engine/grammar/ast'
import { ANNOTATIONS, inferType, matchesType, SUPPORTED } from '#shared/engine/grammar/json-keywords'
import { boundedNumber, jsonNumber, scaledRange } from '#shared/engine/grammar/json-numbers'
import { formatNode, jsonChar, keyExcluding, patternNode } from '#shared/engine/grammar/json-values'
import { regexToNode } from '#shared/engine/grammar/regex'

/** How JSON output may be laid out (vLLM's `disable_any_whitespace`, `whitespace_pattern`, `disable_additional_properties`). */
export type JsonLayoutOptions = {
  disableAnyWhitespace?: boolean
  whitespacePattern?: string
  disableAdditionalProperties?: boolean
}

type Schema = Record<string, unknown>

const INF = Number.POSITIVE_INFINITY
// Default layout: nothing, one space, or a newline with up to 16 spaces of indentation. Unbounded whitespace lets a
// small model wander into blank runs; this still admits compact, spaced and pretty-printed JSON.
const DEFAULT_WS = opt(alt(lit(' '), seq(lit('\n'), rep(lit(' '), 0, 16))))

class SchemaCompiler {
  readonly rules = new Map<string, GNode>()
  private readonly refs = new Map<string, string>()
  private counter = 0

  constructor(
    private readonly root: unknown,
    private readonly options: JsonLayoutOptions,
  ) {
    const ws = options.whitespacePattern
      ? regexToNode(options.whitespacePattern)
      : options.disableAnyWhitespace
        ? EMPTY
        : DEFAULT_WS
    this.rules.set('ws', ws)
    this.rules.set('char', jsonChar())
    this.rules.set('string', seq(lit('"'), rep(ref('char'), 0, INF), lit('"')))
    this.rules.set('number', jsonNumber())
    this.rules.set('integer', scaledRange(Number.NEGATIVE_INFINITY, INF) as GNode)
    const W = ref('ws')
    const member = seq(ref('string'), W, lit(':'), W, ref('value'))
    this.rules.set('object', seq(lit('{'), W, opt(seq(member, rep(seq(W, lit(','), W, member), 0, INF))), W, lit('}')))
    const items = seq(ref('value'), rep(seq(W, lit(','), W, ref('value')), 0, INF))
    this.rules.set('array', seq(lit('['), W, opt(items), W, lit(']')))
    const scalars = ['string', 'number', 'object', 'array'].map(ref)
    this.rules.set('value', alt(...scalars, lit('true'), lit('false'), lit('null')))
  }

  rule(node: GNode, hint = 'r'): GNode {
    const name = `${hint}${this.counter++}`
    this.rules.set(name, node)
    return ref(name)
  }

  compile(schema: unknown, path: string): GNode {
    if (schema === true || (typeof schema === 'object' && schema !== null && Object.keys(schema).length === 0))
      return ref('value')
    if (schema === false) throw new UnsupportedConstraintError(`The schema at ${path} matches nothing`)
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new UnsupportedConstraintError(`The schema at ${path} must be an object or a boolean`)
    }
    const s = schema as Schema
    for (const key of Object.keys(s)) {
      if (!SUPPORTED.has(key) && !ANNOTATIONS.has(key)) {
        throw new UnsupportedConstraintError(
          `JSON schema keyword \`${key}\` (at ${path}) is not supported by the reference engine`,
        )
      }
    }
    if (s.$ref !== undefined) return this.reference(String(s.$ref), path)
    if (s.const !== undefined) return lit(JSON.stringify(s.const))
    if (Array.isArray(s.enum)) {
      const types = s.type === undefined ? undefined : ([] as unknown[]).concat(s.type)
      const values = s.enum.filter((v) => types === undefined || types.some((t) => matchesType(v, String(t))))
      if (values.length === 0)
        throw new UnsupportedConstraintError(`The enum at ${path} has no value of the given type`)
      return alt(...values.map((v) => lit(JSON.stringify(v))))
    }
    if (Array.isArray(s.anyOf)) return alt(...s.anyOf.map((sub, i) => this.compile(sub, `${path}/anyOf/${i}`)))
    if (Array.isArray(s.allOf)) {
      if (s.allOf.length !== 1)
        throw new UnsupportedConstraintError(`allOf with several schemas (at ${path}) is not supported`)
      return this.compile(s.allOf[0], `${path}/allOf/0`)
    }
    const types = s.type === undefined ? [inferType(s)] : ([] as unknown[]).concat(s.type).map(String)
    return alt(...types.map((t) => this.typed(t, s, path)))
  }

  private reference(target: string, path: string): GNode {
    const existing = this.refs.get(target)
    if (existing) return ref(existing)
    let resolved: unknown = this.root
    if (target !== '#') {
      const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(target)
      if (!m)
        throw new UnsupportedConstraintError(`$ref \`${target}\` (at ${path}) is not supported; use #/$defs/<name>`)
      resolved = ((this.root as Schema)[m[1] as string] as Schema | undefined)?.[
        (m[2] as string).replaceAll('~1', '/').replaceAll('~0', '~')
      ]
      if (resolved === undefined)
        throw new UnsupportedConstraintError(`$ref \`${target}\` (at ${path}) does not resolve`)
    }
    const name = `ref${this.counter++}`
    this.refs.set(target, name)
    this.rules.set(name, EMPTY)
    this.rules.set(name, this.compile(resolved, target))
    return ref(name)
  }

  private typed(type: string, s: Schema, path: string): GNode {
    switch (type) {
      case 'object':
        return this.object(s, path)
      case 'array':
        return this.array(s, path)
      case 'string':
        return this.string(s, path)
      case 'integer':
      case 'number':
        return this.number(type, s, path)
      case 'boolean':
        return alt(lit('true'), lit('false'))
      case 'null':
        return lit('null')
      case 'any':
        return ref('value')
      default:
        throw new UnsupportedConstraintError(`JSON schema type \`${type}\` (at ${path}) is not supported`)
    }
  }

  private string(s: Schema, path: string): GNode {
    const hasLength = s.minLength !== undefined || s.maxLength !== undefined
    if ((s.pattern !== undefined || s.format !== undefined) && hasLength) {
      throw new UnsupportedConstraintError(
        `pattern or format combined with minLength/maxLength (at ${path}) is not supported`,
      )
    }
    let inner: GNode
    // With both, the pattern is enforced: the openai SDK's zod helper writes `format` beside the exact pattern zod
    // validates with (email, uuid, date, date-time, or its own `starts_with`…), and that pattern implies the format.
    if (typeof s.pattern === 'string') inner = patternNode(s.pattern)
    else if (typeof s.format === 'string') inner = formatNode(s.format)
    else {
      const min = Number(s.minLength ?? 0)
      const max = s.maxLength === undefined ? INF : Number(s.maxLength)
      if (!(min <= max)) throw new UnsupportedConstraintError(`minLength exceeds maxLength at ${path}`)
      inner = rep(ref('char'), min, max)
    }
    return this.rule(seq(lit('"'), inner, lit('"')), 'str')
  }

  private number(type: 'integer' | 'number', s: Schema, path: string): GNode {
    const node = boundedNumber(type, s, path)
    return node.t === 'ref' ? node : this.rule(node, 'num')
  }

  private array(s: Schema, path: string): GNode {
    const min = Number(s.minItems ?? 0)
    const max = s.maxItems === undefined ? INF : Number(s.maxItems)
    if (!(min <= max)) throw new UnsupportedConstraintError(`minItems exceeds maxItems at ${path}`)
    if (min > 1000 || (max !== INF && max > 1000))
      throw new UnsupportedConstraintError(`Array bounds above 1000 (at ${path}) are not supported`)
    const W = ref('ws')
    const item =
      s.items === undefined || s.items === true
        ? ref('value')
        : this.rule(this.compile(s.items, `${path}/items`), 'item')
    if (max === 0) return seq(lit('['), W, lit(']'))
    const body = seq(item, rep(seq(W, lit(','), W, item), Math.max(min - 1, 0), max - 1))
    return this.rule(seq(lit('['), W, min === 0 ? opt(body) : body, W, lit(']')), 'arr')
  }

  private object(s: Schema, path: string): GNode {
    const props = (s.properties ?? {}) as Record<string, unknown>
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : [])
    const extra =
      s.additionalProperties === false ||
      (s.additionalProperties === undefined && this.options.disableAdditionalProperties)
        ? undefined
        : s.additionalProperties === undefined || s.additionalProperties === true
          ? ref('value')
          : this.rule(this.compile(s.additionalProperties, `${path}/additionalProperties`), 'extra')
    const names = Object.keys(props)
    for (const name of required) if (!(name in props)) names.push(name)
    const W = ref('ws')
    const values = names.map((n) =>
      n in props ? this.rule(this.compile(props[n], `${path}/properties/${n}`), 'prop') : (extra ?? ref('value')),
    )
    const member = (i: number) => seq(lit(JSON.stringify(names[i])), W, lit(':'), W, values[i] as GNode)
    const extraMember = extra ? seq(keyExcluding(names, ref('char')), W, lit(':'), W, extra) : undefined
    const tail = (needComma: boolean): GNode => {
      if (!extraMember) return EMPTY
      const more = rep(seq(W, lit(','), W, extraMember), 0, INF)
      return needComma ? more : opt(seq(extraMember, more))
    }
    const base = `obj${this.counter++}_`
    // Rule `m<i>_<c>`: the members from index i on, in declared order; c says whether a comma must come first.
    for (let i = names.length; i >= 0; i--) {
      for (const needComma of [false, true]) {
        const items: GNode[] = []
        let j = i
        for (; j < names.length; j++) {
          items.push(seq(needComma ? seq(W, lit(','), W) : EMPTY, member(j), ref(`${base}m${j + 1}_1`)))
          if (required.has(names[j] as string)) break
        }
        if (j >= names.length) items.push(tail(needComma))
        this.rules.set(`${base}m${i}_${needComma ? 1 : 0}`, alt(...items))
      }
    }
    return seq(lit('{'), W, ref(`${base}m0_0`), W, lit('}'))
  }
}

/** A grammar whose complete outputs are exactly JSON texts valid against the schema (within the supported subset). */
export function jsonSchemaGrammar(schema: unknown, options: JsonLayoutOptions = {}): Grammar {
  const compiler = new SchemaCompiler(schema, options)
  compiler.rules.set('root', compiler.compile(schema, '#'))
  return { rules: compiler.rules, root: 'root' }
}

/** A grammar for any JSON object (`json_object` / `response_format: {type: "json_object"}`). */
export function jsonObjectGrammar(options: JsonLayoutOptions = {}): Grammar {
  const compiler = new SchemaCompiler({}, options)
  compiler.rules.set('root', ref('object'))
  return { rules: compiler.rules, root: 'root' }
}
