import { randomUUID } from 'node:crypto'
import { config } from '#shared/config'
import { beamSearch } from '#shared/engine/beam-search'
import { clampLogprob, type LogprobEntry } from '#shared/engine/logprob-entry'
import { causalLogits, NgramModel } from '#shared/engine/ngram'
import { type EngineParams, engineParams } from '#shared/engine/params'
import { PrefixCache } from '#shared/engine/prefix-cache'
import { buildPrompt, type Prompt, userTextSpans } from '#shared/engine/prompt'
import { logSoftmax, Rng, rankOf, topTokens } from '#shared/engine/sampler'
import { Scheduler } from '#shared/engine/scheduler'
import { type Job, Sequence, type StepResult } from '#shared/engine/sequence'
import { engineSettings, type ResolvedEngineSettings } from '#shared/engine/settings'
import { constraintFor } from '#shared/engine/structured'
import { tokenText } from '#shared/engine/tokenizer'
import { BadRequestError } from '#shared/errors/http-error'
import type { CancelSignal } from '#shared/inference/cancellation'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

/** A request ready to run: the request, its prompt, parameters, the shared job and the model's engine. */
export type Prepared = {
  request: ChatCompletionRequest
  prompt: Prompt
  params: EngineParams
  job: Job
  engine: ModelEngine
  priority: number
  salt: string | undefined
}

/** One event of a generation: a step of choice `index`, or its end. */
export type GenerationEvent =
  | { kind: 'step'; index: number; step: StepResult; sequence: Sequence }
  | { kind: 'beam'; index: number; sequence: Sequence; logprobs: LogprobEntry[] }

/** Prompt logprobs in vLLM's shape: null for the first token, then `{id: {logprob, rank, decoded_token}}`. */
export type PromptLogprobs = (Record<string, { logprob: number; rank: number; decoded_token: string }> | null)[]

// Yield to the event loop between tokens so concurrent streams interleave and aborts are seen.
const tick = () => new Promise<void>((resolve) => setImmediate(resolve))
// A macrotask per token costs more than the token itself; every few tokens keeps streams interleaved and cheap.
const TICK_EVERY = 4

/** The engine state of one catalog model: settings, admission queue and prefix cache. */
export class ModelEngine {
  readonly scheduler: Scheduler
  readonly cache: PrefixCache

  constructor(readonly settings: ResolvedEngineSettings) {
    this.scheduler = new Scheduler(settings.maxConcurrency, settings.scheduling)
    this.cache = new PrefixCache(settings.prefixCacheBlocks)
  }

  /** Validates and tokenizes a request; every 400 the engine raises is thrown here, before any output. */
  prepare(request: ChatCompletionRequest): Prepared {
    const priority = request.priority ?? 0
    if (priority !== 0 && this.settings.scheduling !== 'priority') {
      throw new BadRequestError(`Got priority ${priority} but Priority scheduling is not enabled.`, {
        param: 'priority',
      })
    }
    const prompt = buildPrompt(request, this.settings)
    const params = engineParams(request, this.settings, prompt.ids.length)
    const matcher = constraintFor(request)
    const model = new NgramModel({
      context: prompt.ids,
      contextWeight: this.settings.contextWeight,
      topic: prompt.lastUserText,
    })
    const job: Job = {
      model,
      params,
      prompt: prompt.ids,
      promptSet: new Set(prompt.ids),
      matcher,
      reasoningOpen: prompt.reasoningOpen,
    }
    const salt = typeof request.cache_salt === 'string' ? request.cache_salt : undefined
    return { request, prompt, params, job, engine: this, priority, salt }
  }
}

const engines = new Map<string, ModelEngine>()

/** The engine of a catalog model, created on first use and rebuilt when its settings change. */
export function engineFor(model: CatalogModel): ModelEngine {
  const settings = engineSettings(model)
  const key = JSON.stringify(settings)
  const existing = engines.get(model.id)
  if (existing && JSON.stringify(existing.settings) === key) return existing
  const engine = new ModelEngine(settings)
  engines.set(model.id, engine)
  return engine
}

/**
 * Forgets every model's engine, with its prefix cache, and numbers unseeded draws from the start again: as after a
 * restart of the server (tests, so that one test file's requests never change what another's sample or cache).
 */
export function resetEngines(): void {
  engines.clear()
  unseeded = 0
}

/**
 * Log-probabilities of each prompt token given only the tokens before it, as vLLM's causal forward pass gives them
 * (null when not asked for, or with beam search): position i reports the raw distribution (before sampling parameters, like logprobs) that generation would start from
 * after a prompt of the first i tokens, so the prompt's counts and the question's topic come from those tokens only.
 */
export function promptLogprobs(prepared: Prepared): PromptLogprobs | null {
  const { params, prompt, engine } = prepared
  // None asked for, or beam search: vLLM's beam search returns `prompt_logprobs=None` whatever the request asked.
  if (params.promptLogprobs === undefined || params.beamSearch) return null
  const k = params.promptLogprobs
  const out: PromptLogprobs = [null]
  const scored = causalLogits(prompt.ids, {
    contextWeight: engine.settings.contextWeight,
    questions: userTextSpans(prompt.ids, prepared.request.messages),
  })
  for (const logits of scored) {
    // The same log-softmax as `Sequence`'s raw logprobs, so both report identical numbers for the same prefix.
    const dist = logSoftmax(logits)
    const actual = prompt.ids[out.length] as number
    const entry: NonNullable<PromptLogprobs[number]> = {}
    const add = (t: number) => {
      entry[String(t)] = {
        logprob: clampLogprob(dist[t] as number),
        rank: rankOf(dist, t),
        // vLLM's detokenized text: `return_tokens_as_token_ids` changes only the chat logprobs (`clamp_prompt_logprobs`
        // leaves the engine's `decoded_token` as it is).
        decoded_token: tokenText(t),
      }
    }
    add(actual)
    for (const [t] of topTokens(dist, k)) add(t)
    out.push(entry)
  }
  return out
}

/** Unseeded requests served so far, numbering their draws from `LOOM_ENGINE_SEED` when it is set. */
let unseeded = 0

/** The generator of each choice: from the request's `seed`, else the engine seed's next draw, else at random. */
function generatorsFor(prepared: Prepared): Rng[] {
  const { seed, n } = prepared.params
  const engineSeed = config.inference.engineSeed
  const draw = engineSeed === undefined ? undefined : `engine:${engineSeed}:${++unseeded}`
  return Array.from({ length: n }, (_, i) => {
    if (seed !== undefined) return new Rng(`${seed}:${i}`)
    return new Rng(draw === undefined ? randomUUID() : `${draw}:${i}`)
  })
}

/**
 * Runs a prepared request once it is admitted: sampling choices advance round-robin one token at a time (yielding to
 * other requests between rounds); beam search yields each finished beam. Stops early when `signal` aborts.
 */
export async function* generate(prepared: Prepared, signal: CancelSignal): AsyncGenerator<GenerationEvent> {
  const { params, job } = prepared
  if (params.beamSearch) {
    const beams = await beamSearch(job, params.n, async () => {
      await tick()
      return !signal.aborted
    })
    for (const [index, beam] of beams.entries())
      yield { kind: 'beam', index, sequence: beam.sequence, logprobs: beam.logprobs }
    return
  }
  const sequences = generatorsFor(prepared).map((rng) => new Sequence(job, rng))
  for (let round = 1; !signal.aborted && sequences.some((s) => !s.finished); round++) {
    for (const [index, sequence] of sequences.entries()) {
      if (!sequence.finished) yield { kind: 'step', index, step: sequence.step(), sequence }
    }
    if (round % TICK_EVERY === 0) await tick()
  }
}
