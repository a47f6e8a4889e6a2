import { engineFor, type GenerationEvent, generate, type Prepared, promptLogprobs } from '#shared/engine/engine'
import type { LogprobEntry } from '#shared/engine/logprob-entry'
import type { Sequence } from '#shared/engine/sequence'
import { ServiceUnavailableError } from '#shared/errors/http-error'
import type { ChatBackend, ChatBackendCall } from '#shared/inference/backend'
import type {
  ChatChoice,
  ChatChunkChoice,
  ChatCompletionChunk,
  ChatCompletionResponse,
  ChatDelta,
  ChatUsage,
} from '#shared/schemas/chat-completion'

type Admitted = { prepared: Prepared; release: () => void; cached: number }

// The prompt's exact count (and, once scheduled, its cached tokens) go on the call as soon as they are known: a request
// cut short before its usage is metered with them rather than an estimate (`ChatBackendCall.known`).
async function admit(call: ChatBackendCall): Promise<Admitted> {
  const engine = engineFor(call.model)
  const prepared = engine.prepare(call.request)
  const promptTokens = prepared.prompt.ids.length
  call.known = { prompt_tokens: promptTokens }
  const release = await engine.scheduler.acquire(prepared.priority, call.signal)
  // Cached tokens are fixed when the request is first scheduled (docs/inference.md §9).
  const cached = engine.cache.lookupAndInsert(prepared.salt, prepared.prompt.ids)
  const details = engine.settings.promptTokensDetails ? { cached_tokens: cached } : null
  call.known = { prompt_tokens: promptTokens, prompt_tokens_details: details }
  return { prepared, release, cached }
}

function usage(a: Admitted, completion: number, reasoning: number): ChatUsage {
  const prompt = a.prepared.prompt.ids.length
  const out: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  out.prompt_tokens_details = a.prepared.engine.settings.promptTokensDetails ? { cached_tokens: a.cached } : null
  out.completion_tokens_details = { reasoning_tokens: reasoning }
  return out
}

// The reference engine always runs with a reasoning parser, so `include_reasoning: false` hides every choice's token
// ids and logprobs, whether or not the answer reasoned, but not the prompt's ids: vLLM's `suppress_metadata` and
// `hide_stream_metadata` (`not request.include_reasoning and parser is not None`, docs/inference.md §5, §6).
function showMetadata(p: Prepared): boolean {
  return p.params.includeReasoning
}

function showIds(p: Prepared): boolean {
  return p.params.returnTokenIds && showMetadata(p)
}

function promptIds(p: Prepared): number[] | null {
  return p.params.returnTokenIds ? [...p.prompt.ids] : null
}

function echoText(p: Prepared): string | undefined {
  return p.params.echo && p.prompt.lastRole === p.prompt.role ? p.prompt.lastContent : undefined
}

function messageContent(p: Prepared, sequence: Sequence): string | null {
  const content = p.job.reasoningOpen && sequence.content === '' ? null : sequence.content
  const echo = echoText(p)
  return echo === undefined ? content : echo + (content ?? '')
}

async function complete(call: ChatBackendCall): Promise<ChatCompletionResponse> {
  const admitted = await admit(call)
  const { prepared } = admitted
  try {
    const prompt = promptLogprobs(prepared)
    const sequences: Sequence[] = []
    const entries: LogprobEntry[][] = Array.from({ length: prepared.params.n }, () => [])
    for await (const event of generate(prepared, call.signal)) {
      sequences[event.index] = event.sequence
      if (event.kind === 'beam') entries[event.index] = event.logprobs
      else if (event.step.logprobs) entries[event.index]?.push(event.step.logprobs)
    }
    if (call.signal.aborted) throw new ServiceUnavailableError('Client disconnected')
    const choices: ChatChoice[] = sequences.map((sequence, index) => ({
      index,
      message: {
        role: prepared.prompt.role,
        content: messageContent(prepared, sequence),
        refusal: null,
        annotations: null,
        audio: null,
        function_call: null,
        reasoning: prepared.job.reasoningOpen && prepared.params.includeReasoning ? sequence.reasoning : null,
      },
      logprobs: prepared.params.logprobs && showMetadata(prepared) ? { content: entries[index] ?? [] } : null,
      finish_reason: sequence.finishReason ?? 'stop',
      stop_reason: sequence.stopReason,
      token_ids: showIds(prepared) ? [...sequence.output] : null,
    }))
    const completion = sequences.reduce((sum, s) => sum + s.output.length, 0)
    const reasoning = sequences.reduce((sum, s) => sum + s.reasoningTokenCount, 0)
    return {
      id: `chatcmpl-${call.requestId}`,
      object: 'chat.completion',
      created: call.created,
      model: call.model.id,
      choices,
      service_tier: null,
      system_fingerprint: null,
      usage: usage(admitted, completion, reasoning),
      prompt_logprobs: prompt,
      prompt_token_ids: promptIds(prepared),
      kv_transfer_params: null,
    }
  } finally {
    admitted.release()
  }
}

function delta(content: string, reasoning: string, showReasoning: boolean): ChatDelta {
  const d: ChatDelta = {}
  if (reasoning !== '' && showReasoning) d.reasoning = reasoning
  if (content !== '' || d.reasoning === undefined) d.content = content
  return d
}

async function* stream(call: ChatBackendCall): AsyncGenerator<ChatCompletionChunk> {
  const admitted = await admit(call)
  const { prepared } = admitted
  const { params } = prepared
  try {
    const base = {
      id: `chatcmpl-${call.requestId}`,
      object: 'chat.completion.chunk' as const,
      created: call.created,
      model: call.model.id,
    }
    const tokens = new Array<number>(params.n).fill(0)
    const reasoning = new Array<number>(params.n).fill(0)
    const prompt = prepared.prompt.ids.length
    // Continuous usage: cumulative tokens of this choice and its reasoning tokens so far, as vLLM's stream generator
    // builds it with a reasoning parser set; prompt token details go on the final usage chunk only.
    const chunk = (
      index: number,
      choice: ChatChunkChoice,
      extra: Partial<ChatCompletionChunk> = {},
    ): ChatCompletionChunk => ({
      ...base,
      choices: [choice],
      ...extra,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: tokens[index] ?? 0,
        total_tokens: prompt + (tokens[index] ?? 0),
        completion_tokens_details: { reasoning_tokens: reasoning[index] ?? 0 },
      },
    })
    const ids = promptIds(prepared)
    // Every choice's role chunk, then every choice's echo, in that order, as vLLM's serving_chat sends them.
    for (let index = 0; index < params.n; index++) {
      const role: ChatChunkChoice = {
        index,
        delta: { role: prepared.prompt.role, content: '' },
        logprobs: null,
        finish_reason: null,
      }
      yield chunk(index, role, { prompt_token_ids: ids })
    }
    const echo = echoText(prepared)
    if (echo !== undefined) {
      for (let index = 0; index < params.n; index++) {
        yield chunk(index, { index, delta: { content: echo }, logprobs: null, finish_reason: null })
      }
    }
    for await (const event of generate(prepared, call.signal)) {
      const { index, sequence } = event
      tokens[index] = sequence.output.length
      reasoning[index] = sequence.reasoningTokenCount
      const choice = choiceOf(prepared, event)
      const empty = !choice.delta.content && choice.delta.reasoning === undefined
      if (empty && choice.finish_reason === null && choice.logprobs === null && choice.token_ids === undefined) continue
      yield chunk(index, choice)
    }
    if (call.signal.aborted) return
    const completion = tokens.reduce((a, b) => a + b, 0)
    yield {
      ...base,
      choices: [],
      usage: usage(
        admitted,
        completion,
        reasoning.reduce((a, b) => a + b, 0),
      ),
    }
  } finally {
    admitted.release()
  }
}

function choiceOf(prepared: Prepared, event: GenerationEvent): ChatChunkChoice {
  const { params } = prepared
  const { index, sequence } = event
  const showReasoning = params.includeReasoning
  const content = event.kind === 'beam' ? sequence.content : event.step.content
  const reasoning = event.kind === 'beam' ? sequence.reasoning : event.step.reasoning
  const entries = event.kind === 'beam' ? event.logprobs : event.step.logprobs ? [event.step.logprobs] : []
  const choice: ChatChunkChoice = {
    index,
    delta: delta(content, reasoning, showReasoning),
    // Hidden metadata leaves a reasoning token's chunk empty, so it is not sent (vLLM's parser gives it no delta).
    logprobs: params.logprobs && showMetadata(prepared) ? { content: entries } : null,
    finish_reason: sequence.finished || event.kind === 'beam' ? (sequence.finishReason ?? 'stop') : null,
  }
  if (choice.finish_reason !== null) choice.stop_reason = sequence.stopReason
  if (showIds(prepared)) choice.token_ids = event.kind === 'beam' ? [...sequence.output] : [event.step.token]
  return choice
}

/** The reference engine as a chat backend: serves every `reference` model of the catalog in-process. */
export function createReferenceBackend(): ChatBackend {
  return { complete, stream }
}

/** The process-wide reference backend. */
export const referenceBackend: ChatBackend = createReferenceBackend()
