import type { SamplingOptions } from '#shared/engine/sampler'
import type { ResolvedEngineSettings } from '#shared/engine/settings'
import { encode, VOCAB_SIZE } from '#shared/engine/tokenizer'
import { BadRequestError } from '#shared/errors/http-error'
import { pyRepr } from '#shared/errors/inference-errors'
import {
  checkGreedyN,
  checkTemperature,
  GREEDY_BELOW,
  minTokensAboveMax,
  nTooLarge,
  pyInt,
  samplingTemperature,
} from '#shared/inference/serving-rules'
import { checkRepetitionDetection } from '#shared/inference/validate-request'
import { CHAT_DEFAULTS, type ChatCompletionRequest, requestedMaxTokens } from '#shared/schemas/chat-completion'

/** Repetition detection thresholds (docs/inference.md §8). */
export type RepetitionRule = { minSize: number; maxSize: number; minCount: number }

/** Everything generation needs from a request, with defaults and the model's generation config applied. */
export type EngineParams = {
  sampling: SamplingOptions
  n: number
  beamSearch: boolean
  lengthPenalty: number
  maxTokens: number
  minTokens: number
  ignoreEos: boolean
  stop: string[]
  stopTokenIds: number[]
  includeStopStr: boolean
  allowedTokenIds: Set<number> | undefined
  badWords: number[][]
  logprobs: boolean
  topLogprobs: number
  promptLogprobs: number | undefined
  seed: number | undefined
  skipSpecialTokens: boolean
  spacesBetweenSpecialTokens: boolean
  returnTokenIds: boolean
  tokensAsIds: boolean
  repetition: RepetitionRule | undefined
  /** Reasoning tokens allowed before `</think>` is forced; undefined when the request asked for no effort level. */
  reasoningBudget: number | undefined
  includeReasoning: boolean
  echo: boolean
}

/** Reasoning length per `reasoning_effort`, in tokens. */
export const REASONING_BUDGET = { low: 32, medium: 96, high: 256 } as const

// vLLM raises a temperature in (0, 0.01) to 0.01 and samples greedily below `GREEDY_BELOW`, so only 0 is greedy.
function effectiveTemperature(temperature: number): number {
  const t = samplingTemperature(temperature)
  return t < GREEDY_BELOW ? 0 : t
}

function bad(message: string, param?: string): never {
  throw new BadRequestError(message, param === undefined ? {} : { param })
}

function logprobLimit(kind: 'sample' | 'prompt', requested: number, settings: ResolvedEngineSettings): number {
  const n = requested === -1 ? VOCAB_SIZE : requested
  const max = settings.maxLogprobs === -1 ? VOCAB_SIZE : settings.maxLogprobs
  if (n > max) {
    bad(
      `Requested ${kind} logprobs of ${n}, which is greater than max allowed: ${max}`,
      kind === 'sample' ? 'logprobs' : 'prompt_logprobs',
    )
  }
  return n
}

// vLLM's `SamplingParams.verify` checks, after the sampling-parameter checks: stop token ids (deduplicated in first
// order, as `__post_init__` keeps them), then allowed token ids, both against the vocabulary. Beam search passes no
// stop token ids to vLLM's engine (it ignores them), so they are not checked there.
function stopTokenIds(r: ChatCompletionRequest, beamSearch: boolean): number[] {
  const ids = [...new Set(r.stop_token_ids ?? [])]
  const invalid = beamSearch ? [] : ids.filter((t) => t < 0 || t >= VOCAB_SIZE)
  if (invalid.length > 0) {
    bad(
      `token_id(s) [${invalid.map(pyInt).join(', ')}] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: ${VOCAB_SIZE}`,
      'stop_token_ids',
    )
  }
  return ids
}

function allowedTokenIds(r: ChatCompletionRequest): Set<number> | undefined {
  const allowed = r.allowed_token_ids ?? undefined
  if (allowed === undefined) return undefined
  if (allowed.length === 0) bad('allowed_token_ids is not None and empty!', 'allowed_token_ids')
  if (allowed.some((t) => t < 0 || t >= VOCAB_SIZE)) {
    bad('allowed_token_ids contains out-of-vocab token id!', 'allowed_token_ids')
  }
  return new Set(allowed)
}

function repetitionRule(r: ChatCompletionRequest): RepetitionRule | undefined {
  const rd = r.repetition_detection
  if (!rd) return undefined
  // The gateway has already checked these; the engine's own OpenAI-compatible server reaches here directly.
  checkRepetitionDetection(r)
  const maxSize = rd.max_pattern_size ?? 0
  const minSize = rd.min_pattern_size ?? 0
  const minCount = rd.min_count ?? 0
  return maxSize > 0 ? { minSize: Math.max(minSize, 1), maxSize, minCount } : undefined
}

// What Python's `int()` takes from a str (vLLM converts each key with it): surrounding whitespace, an optional sign,
// and decimal digits with single underscores between them. (Python also takes non-ASCII decimal digits; not these.)
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/

function logitBias(r: ChatCompletionRequest): Map<number, number> {
  const bias = new Map<number, number>()
  const unconvertible: string[] = []
  const invalid: string[] = []
  for (const [key, value] of Object.entries(r.logit_bias ?? {})) {
    if (!PY_INT.test(key)) {
      unconvertible.push(key)
      continue
    }
    const digits = key.trim().replaceAll('_', '')
    const id = Number(digits)
    // Listed as Python prints the int: no sign for zero, no leading zeros, every digit of a huge one.
    if (id < 0 || id >= VOCAB_SIZE) invalid.push(BigInt(digits).toString())
    else bias.set(id, Math.min(100, Math.max(-100, value)))
  }
  // vLLM converts every key before it checks any against the vocabulary (`SamplingParams.from_optional`).
  if (unconvertible.length > 0) {
    bad(
      `logit_bias contains key(s) that cannot be converted to integer token IDs: ${pyRepr(unconvertible)}`,
      'logit_bias',
    )
  }
  if (invalid.length > 0) {
    bad(
      `token_id(s) [${invalid.join(', ')}] in logit_bias contain out-of-vocab token ids. Vocabulary size: ${VOCAB_SIZE}`,
      'logit_bias',
    )
  }
  return bias
}

/** Resolves and checks the request's generation parameters against the model and the prompt length. */
export function engineParams(
  r: ChatCompletionRequest,
  settings: ResolvedEngineSettings,
  promptLength: number,
): EngineParams {
  const L = settings.maxModelLen
  const requested = requestedMaxTokens(r)
  // vLLM's `TokenizeParams._token_len_check`: the prompt may fill what the output budget (0 when none is asked for)
  // leaves of the window.
  const output = requested || 0
  if (promptLength > L - output) {
    bad(
      `You passed ${promptLength} input tokens and requested ${output} output tokens. However, the model's context length is only ${L} tokens, resulting in a maximum input length of ${L - output} tokens. Please reduce the length of the input prompt.`,
      'input_tokens',
    )
  }
  if (promptLength >= L) {
    bad(
      `This model's maximum context length is ${L} tokens. However, your request has ${promptLength} input tokens. Please reduce the length of the input messages.`,
      'input_tokens',
    )
  }
  const gen = settings.generationConfig
  // vLLM's `get_max_tokens`: the context left after the prompt, the request's maximum or the generation config's.
  const maxTokens = Math.min(L - promptLength, requested ?? gen.max_tokens ?? Number.POSITIVE_INFINITY)
  const n = r.n ?? CHAT_DEFAULTS.n
  if (n > settings.maxN) nTooLarge(n, settings.maxN)
  const temperature = r.temperature ?? gen.temperature ?? CHAT_DEFAULTS.temperature
  // Here with the model's generation config too, as vLLM checks the effective values: a default temperature of 0
  // makes every request greedy.
  checkTemperature(temperature)
  const beamSearch = r.use_beam_search ?? false
  const minTokens = r.min_tokens ?? 0
  // vLLM's beam search builds no `SamplingParams` from the request, so `min_tokens` meets no maximum there.
  if (!beamSearch && minTokens > maxTokens) minTokensAboveMax(minTokens, maxTokens)
  checkGreedyN(n, temperature, beamSearch)
  const topLogprobs = r.logprobs === true ? logprobLimit('sample', r.top_logprobs ?? 0, settings) : 0
  // vLLM: with `echo` and no `prompt_logprobs`, prompt logprobs take `top_logprobs` (default 0).
  const requestedPromptLogprobs = r.prompt_logprobs ?? (r.echo ? (r.top_logprobs ?? 0) : undefined)
  const promptLogprobs =
    requestedPromptLogprobs === undefined || requestedPromptLogprobs === null
      ? undefined
      : logprobLimit('prompt', requestedPromptLogprobs, settings)
  const bias = logitBias(r)
  const stopIds = stopTokenIds(r, beamSearch)
  const allowed = allowedTokenIds(r)
  const topK = r.top_k ?? gen.top_k ?? CHAT_DEFAULTS.top_k
  return {
    sampling: {
      temperature: effectiveTemperature(temperature),
      topK: topK === -1 ? 0 : topK,
      topP: r.top_p ?? gen.top_p ?? CHAT_DEFAULTS.top_p,
      minP: r.min_p ?? gen.min_p ?? CHAT_DEFAULTS.min_p,
      presencePenalty: r.presence_penalty ?? CHAT_DEFAULTS.presence_penalty,
      frequencyPenalty: r.frequency_penalty ?? CHAT_DEFAULTS.frequency_penalty,
      repetitionPenalty: r.repetition_penalty ?? gen.repetition_penalty ?? CHAT_DEFAULTS.repetition_penalty,
      logitBias: bias,
    },
    n,
    beamSearch,
    lengthPenalty: r.length_penalty ?? CHAT_DEFAULTS.length_penalty,
    maxTokens,
    minTokens,
    ignoreEos: r.ignore_eos ?? false,
    stop: typeof r.stop === 'string' ? [r.stop] : (r.stop ?? []),
    stopTokenIds: stopIds,
    includeStopStr: r.include_stop_str_in_output ?? false,
    allowedTokenIds: allowed,
    badWords: (r.bad_words ?? []).map((w) => encode(w)).filter((ids) => ids.length > 0),
    logprobs: r.logprobs === true,
    topLogprobs,
    promptLogprobs,
    // vLLM's `__post_init__` reads seed -1 as no seed: such a request samples as an unseeded one.
    seed: r.seed === -1 ? undefined : (r.seed ?? undefined),
    skipSpecialTokens: r.skip_special_tokens ?? CHAT_DEFAULTS.skip_special_tokens,
    spacesBetweenSpecialTokens: r.spaces_between_special_tokens ?? CHAT_DEFAULTS.spaces_between_special_tokens,
    returnTokenIds: r.return_token_ids === true,
    tokensAsIds: r.return_tokens_as_token_ids === true,
    repetition: repetitionRule(r),
    reasoningBudget: r.reasoning_effort ? REASONING_BUDGET[r.reasoning_effort] : undefined,
    includeReasoning: r.include_reasoning ?? CHAT_DEFAULTS.include_reasoning,
    echo: r.echo ?? false,
  }
}
