import { randomInt, randomUUID } from 'node:crypto'
import { config } from '#shared/config'
import { addUsage, type UsageDelta } from '#shared/db/usage-repository'
import { logger } from '#shared/logger'
import type { ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// Completions add to an in-memory batch (merged per counter); a flush writes each counter once. In a long-running
// server the flush runs on a timer, off every response's path; in Lambda (`usageFlushMs` 0) right after the
// response, which is then its only DynamoDB write. Writers pick one shard per process.
const SHARDS = 8
const shard = randomInt(SHARDS)

type Pending = { delta: UsageDelta; flushId?: string }

let batch = new Map<string, UsageDelta>()
// Writes that failed: retried later with their original flush id, never merged, so a retry cannot double-count.
let failed: Pending[] = []
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
 * An estimate of a request's prompt tokens, used only to meter a stream that ended before the upstream reported any
 * usage (an upstream without continuous usage stats, cut off mid-stream): an estimate is closer than zero.
 */
export function estimatePromptTokens(request: ChatCompletionRequest): number {
  const messages = request.messages as { content?: unknown }[]
  const chars = messages.reduce((n, m) => n + textLength(m.content), 0)
  return Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages.length + TOKENS_PER_MESSAGE
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
  const pending: Pending[] = [...failed, ...[...batch.values()].map((delta) => ({ delta }))]
  batch = new Map()
  failed = []
  const flushId = randomUUID()
  await Promise.all(
    pending.map(async (p) => {
      const id = p.flushId ?? flushId
      try {
        await addUsage(p.delta, shard, id)
      } catch (error) {
        logger.warn('usage flush failed; will retry', { error })
        failed.push({ delta: p.delta, flushId: id })
      }
    }),
  )
}

/** Writes every batched counter now (one UpdateItem per counter); concurrent calls share one flush. */
export async function flushUsage(): Promise<void> {
  if (timer !== undefined) {
    clearTimeout(timer)
    timer = undefined
  }
  while (flushing !== undefined) await flushing
  if (batch.size === 0 && failed.length === 0) return
  flushing = writeAll().finally(() => {
    flushing = undefined
  })
  await flushing
}

/**
 * Called once a response is complete: schedules the batched flush, or (with `usageFlushMs` 0, e.g. in Lambda, where
 * an idle environment may be frozen or dropped) flushes now; the caller awaits it after its last byte.
 */
export function afterCompletion(): Promise<void> {
  if (config.inference.usageFlushMs === 0) return flushUsage()
  if (timer === undefined) {
    timer = setTimeout(() => {
      timer = undefined
      void flushUsage()
    }, config.inference.usageFlushMs)
    timer.unref()
  }
  return Promise.resolve()
}
