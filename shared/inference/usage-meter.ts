import { randomBytes, randomInt } from 'node:crypto'
import { config } from '#shared/config'
import { registerProject } from '#shared/db/project-repository'
import { addUsage, type UsageDelta } from '#shared/db/usage-repository'
import type { ChatBackendCall, KnownPrompt } from '#shared/inference/backend'
import { logger } from '#shared/logger'
import type { ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// Completions add to an in-memory batch (merged per counter); a flush writes each counter once. In a long-running
// server the flush runs on a timer, off every response's path; in Lambda (`usageFlushMs` 0) right after the
// response, which is then its only DynamoDB write. Writers pick one shard per process.
const SHARDS = 8
const shard = randomInt(SHARDS)
// This process's id on the counters it writes (72 random bits) and its flush number (see addUsage).
const writer = randomBytes(9).toString('base64url')
let flushSeq = 0

type Pending = { key: string; delta: UsageDelta; seq: number }

let batch = new Map<string, UsageDelta>()
// Writes whose outcome is unknown (failed, or applied with the answer lost), per counter: retried with their original
// flush number, never merged. While one is pending, newer deltas of that counter stay in the batch: the counter
// remembers only each writer's last number, so a newer write landing first would let the retry count twice.
let failed = new Map<string, Pending>()
let timer: NodeJS.Timeout | undefined
let flushing: Promise<void> | undefined

/** One finished or aborted completion, as the meter needs it. */
export type CompletionUsage = {
  entity: string
  project: string
  model: CatalogModel
  usage: Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>
  aborted: boolean
  at?: Date
}

/**
 * The prompt usage of a completion cut short before the backend reported usage: what the backend learned of it
 * (`ChatBackendCall.known`), else the estimate, without cached tokens.
 */
export function promptOf(call: ChatBackendCall): KnownPrompt {
  return call.known ?? { prompt_tokens: estimatePromptTokens(call.request) }
}

/** The counter's hour of a date, `yyyy-mm-ddThh` (UTC). */
export function hourOf(date: Date): string {
  return date.toISOString().slice(0, 13)
}

const HOUR_MS = 3_600_000
let current = { hour: -1, text: '' }

// The current hour's text, formatted once an hour rather than on every completion.
function currentHour(): string {
  const hour = Math.floor(Date.now() / HOUR_MS)
  if (hour !== current.hour) current = { hour, text: hourOf(new Date(hour * HOUR_MS)) }
  return current.text
}

/** The cost of a completion at the model's prices (cached prompt tokens at the cached price when one is set). */
export function costOf(model: CatalogModel, usage: CompletionUsage['usage']): number {
  const prices = model.prices
  if (prices === undefined) return 0
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0
  const fresh = Math.max(0, usage.prompt_tokens - cached)
  return fresh * prices.prompt + cached * (prices.cached ?? prices.prompt) + usage.completion_tokens * prices.completion
}

// OpenAI's rule of thumb for English text (about 4 characters a token) and its per-message framing (3 tokens each,
// plus 3 priming the reply).
const CHARS_PER_TOKEN = 4
const TOKENS_PER_MESSAGE = 3

function textLength(content: unknown): number {
  if (typeof content === 'string') return content.length
  if (!Array.isArray(content)) return 0
  return content.reduce((n: number, part: unknown) => {
    const text = (part as { text?: unknown } | null)?.text
    return n + (typeof text === 'string' ? text.length : 0)
  }, 0)
}

/**
 * An estimate of a request's prompt tokens, used only when the upstream reported none: a stream cut off before its
 * usage (an upstream without continuous usage stats), or an upstream that leaves usage out. Closer than zero.
 */
export function estimatePromptTokens(request: ChatCompletionRequest): number {
  const messages = request.messages as { content?: unknown }[]
  const chars = messages.reduce((n, m) => n + textLength(m.content), 0)
  return Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages.length + TOKENS_PER_MESSAGE
}

/**
 * An estimate of a reply's completion tokens from its choices' text (content and reasoning, 4 characters a token),
 * used only when the upstream answered without usage.
 */
export function estimateCompletionTokens(
  choices: readonly { message?: { content?: unknown; reasoning?: unknown } | null }[],
): number {
  let tokens = 0
  for (const choice of choices) {
    const chars = textLength(choice.message?.content) + textLength(choice.message?.reasoning)
    tokens += Math.ceil(chars / CHARS_PER_TOKEN)
  }
  return tokens
}

/** Adds one completion to the batch. Never throws and never waits: metering is off the critical path. */
export function recordUsage(entry: CompletionUsage): void {
  const hour = entry.at === undefined ? currentHour() : hourOf(entry.at)
  const key = `${entry.entity}\u0000${entry.project}\u0000${entry.model.id}\u0000${hour}`
  let delta = batch.get(key)
  if (delta === undefined) {
    delta = {
      entity: entry.entity,
      project: entry.project,
      model: entry.model.id,
      hour,
      requests: 0,
      abortedRequests: 0,
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      costUsd: 0,
    }
    batch.set(key, delta)
  }
  delta.requests += 1
  if (entry.aborted) delta.abortedRequests += 1
  delta.promptTokens += entry.usage.prompt_tokens
  delta.completionTokens += entry.usage.completion_tokens
  delta.cachedTokens += entry.usage.prompt_tokens_details?.cached_tokens ?? 0
  delta.costUsd += costOf(entry.model, entry.usage)
}

async function writeAll(): Promise<void> {
  flushSeq += 1
  const seq = flushSeq
  const pending: Pending[] = [...failed.values()]
  const held = new Map<string, UsageDelta>()
  for (const [key, delta] of batch) {
    if (failed.has(key)) held.set(key, delta)
    else pending.push({ key, delta, seq })
  }
  batch = held
  failed = new Map()
  await Promise.all(
    pending.map(async (p) => {
      try {
        await registerProject(`${p.delta.entity}/${p.delta.project}`)
        await addUsage(p.delta, shard, { writer, seq: p.seq })
      } catch (error) {
        logger.warn('usage flush failed; will retry', { error })
        failed.set(p.key, p)
      }
    }),
  )
}

/**
 * Writes every batched counter now (one UpdateItem per counter); concurrent calls share one flush. A counter whose
 * earlier write is still unresolved gets that write retried instead, and its newer delta waits for the next flush.
 */
export async function flushUsage(): Promise<void> {
  if (timer !== undefined) {
    clearTimeout(timer)
    timer = undefined
  }
  while (flushing !== undefined) await flushing
  if (batch.size === 0 && failed.size === 0) return
  flushing = writeAll().finally(() => {
    flushing = undefined
  })
  await flushing
  // On a timer, what is left (a retry, a delta held behind it) goes out with the next flush without waiting for a
  // completion to schedule one.
  if ((batch.size > 0 || failed.size > 0) && config.inference.usageFlushMs > 0) schedule()
}

function schedule(): void {
  if (timer !== undefined) return
  timer = setTimeout(() => {
    timer = undefined
    void flushUsage()
  }, config.inference.usageFlushMs)
  timer.unref()
}

/**
 * Called once a response is complete: schedules the batched flush, or (with `usageFlushMs` 0, e.g. in Lambda, where
 * an idle environment may be frozen or dropped) flushes now; the caller awaits it after its last byte.
 */
export function afterCompletion(): Promise<void> {
  if (config.inference.usageFlushMs === 0) return flushUsage()
  schedule()
  return Promise.resolve()
}
