import { alt, type Grammar, lit, UnsupportedConstraintError } from '#shared/engine/grammar/ast'
import { parseGbnf } from '#shared/engine/grammar/gbnf'
import { type JsonLayoutOptions, jsonObjectGrammar, jsonSchemaGrammar } from '#shared/engine/grammar/json-schema'
import { Matcher } from '#shared/engine/grammar/matcher'
import { regexToNode } from '#shared/engine/grammar/regex'
import { InvalidStructuralTagError, structuralTagGrammar } from '#shared/engine/grammar/structural-tag'
import { BadRequestError } from '#shared/errors/http-error'
import { constraintConflict } from '#shared/inference/serving-rules'
import { invalidStructuralTagError } from '#shared/inference/validate-request'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'

/**
 * Turns `structured_outputs` and `response_format` into a grammar matcher that constrains decoding. Anything the
 * engine cannot enforce is a 400: a constraint is never silently dropped.
 */

const KINDS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const

// Compiled matchers are reused across requests with the same constraint (their state caches stay warm).
const cache = new Map<string, Matcher>()
const CACHE_LIMIT = 128
// The grammar states all cached matchers may hold together (about 5 of the largest a request may compile, some tens
// of MB): a count limit alone would let 128 grammars of 400,000 states each stay in memory.
const CACHE_GRAMMAR_STATES = 2_000_000
let cachedGrammarStates = 0

function remember(key: string, matcher: Matcher): void {
  const drop = (k: string) => {
    cachedGrammarStates -= cache.get(k)?.grammarStates ?? 0
    cache.delete(k)
  }
  drop(key)
  while (
    cache.size > 0 &&
    (cache.size >= CACHE_LIMIT || cachedGrammarStates + matcher.grammarStates > CACHE_GRAMMAR_STATES)
  ) {
    drop(cache.keys().next().value as string)
  }
  cache.set(key, matcher)
  cachedGrammarStates += matcher.grammarStates
}
// Unbounded grammars (nested JSON) keep creating states; past this a fresh matcher replaces the cached one.
const MAX_CACHED_STATES = 50_000

function set(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false
}

function layout(so: Record<string, unknown>): JsonLayoutOptions {
  const options: JsonLayoutOptions = {}
  if (so.disable_any_whitespace === true) options.disableAnyWhitespace = true
  if (typeof so.whitespace_pattern === 'string') options.whitespacePattern = so.whitespace_pattern
  if (so.disable_additional_properties === true) options.disableAdditionalProperties = true
  return options
}

function grammarFor(kind: string, value: unknown, options: JsonLayoutOptions): Grammar {
  switch (kind) {
    case 'json': {
      let schema = value
      if (typeof value === 'string') {
        try {
          schema = JSON.parse(value)
        } catch {
          throw new UnsupportedConstraintError('structured_outputs.json is not valid JSON')
        }
      }
      return jsonSchemaGrammar(schema, options)
    }
    case 'json_object':
      return jsonObjectGrammar(options)
    case 'regex':
      if (typeof value !== 'string') throw new UnsupportedConstraintError('structured_outputs.regex must be a string')
      return { rules: new Map([['root', regexToNode(value)]]), root: 'root' }
    case 'choice': {
      if (!Array.isArray(value) || value.length === 0)
        throw new UnsupportedConstraintError(`Choice '${JSON.stringify(value)}' cannot be an empty list`)
      return { rules: new Map([['root', alt(...value.map((c) => lit(String(c))))]]), root: 'root' }
    }
    case 'grammar':
      if (typeof value !== 'string' || value.trim() === '')
        throw new UnsupportedConstraintError('structured_outputs.grammar cannot be an empty string')
      return parseGbnf(value)
    case 'structural_tag':
      return structuralTagGrammar(value, options)
    default:
      throw new UnsupportedConstraintError(`structured_outputs.${kind} is not supported by the reference engine`)
  }
}

/** The constraint of a request, or undefined when its output is free text. */
export function constraintFor(request: ChatCompletionRequest): Matcher | undefined {
  const so: Record<string, unknown> = {
    ...((request.structured_outputs as Record<string, unknown> | null | undefined) ?? {}),
  }
  const rf = request.response_format
  if (rf?.type === 'json_object') so.json_object = true
  else if (rf?.type === 'json_schema') {
    const spec = (rf as { json_schema?: { schema?: unknown } | null }).json_schema
    so.json = spec?.schema ?? {}
  } else if (rf?.type === 'structural_tag') {
    // vLLM passes the whole response format on as `structured_outputs.structural_tag` (its JSON dump).
    so.structural_tag = rf
  }
  // The gateway has already refused these (vLLM's `StructuredOutputsParams` checks); a direct caller gets the same 400.
  const conflict = constraintConflict(request)
  if (conflict !== undefined) throw new BadRequestError(conflict)
  const kind = KINDS.find((k) => set(so[k]))
  if (kind === undefined) return undefined
  const options = layout(so)
  const key = JSON.stringify([kind, so[kind], options])
  const hit = cache.get(key)
  if (hit && hit.cachedStates < MAX_CACHED_STATES) return hit
  try {
    const matcher = new Matcher(grammarFor(kind, so[kind], options))
    remember(key, matcher)
    return matcher
  } catch (error) {
    // What xgrammar refuses is vLLM's request-validation 400, named by the field that carried the tag
    // (docs/inference.md §3.3, §3.4).
    if (error instanceof InvalidStructuralTagError) {
      const field = rf?.type === 'structural_tag' ? 'response_format' : 'structured_outputs'
      throw invalidStructuralTagError(field, request, error)
    }
    if (error instanceof UnsupportedConstraintError) {
      throw new BadRequestError(error.message, { param: 'structured_outputs', cause: error })
    }
    throw error
  }
}
