import { safeParse } from 'zod/mini'
import { misconfigured } from '#shared/errors/http-error'
import { logger } from '#shared/logger'
import { type EngineSettings, EngineSettingsSchema } from '#shared/schemas/engine-settings'
import type { CatalogModel } from '#shared/schemas/model'

/** The reference model's context window when the catalog entry sets none. */
export const DEFAULT_MAX_MODEL_LEN = 8192

/**
 * The context window a catalog model enforces, which `GET /v1/models` reports: the reference engine's
 * (`maxModelLen`, else its default), or for an upstream model the catalog's `maxModelLen` (null when unset: only the
 * upstream knows it).
 */
export function maxModelLenOf(model: CatalogModel): number | null {
  if (model.backend.kind === 'reference') return model.maxModelLen ?? DEFAULT_MAX_MODEL_LEN
  return model.maxModelLen ?? null
}

/**
 * Largest `n` when the catalog entry sets none. vLLM itself sets no bound (a huge `n` exhausts its memory); Loom's
 * engine answers 400 instead, at OpenAI's documented cap.
 */
export const DEFAULT_MAX_N = 128

/** Resolved settings of one reference model. */
export type ResolvedEngineSettings = {
  id: string
  maxModelLen: number
  chatTemplate: string | null | undefined
  maxConcurrency: number
  maxN: number
  maxLogprobs: number
  contextWeight: number
  prefixCacheBlocks: number
  promptTokensDetails: boolean
  scheduling: 'fcfs' | 'priority'
  generationConfig: NonNullable<EngineSettings['generationConfig']>
}

/**
 * Reads a catalog entry's engine settings, with defaults. Settings that fail `EngineSettingsSchema` (an entry written
 * to the table past the checks) are a 503 naming the model and the field, like any other catalog entry that cannot
 * serve, never a bare 500 nor a 400.
 */
export function engineSettings(model: CatalogModel): ResolvedEngineSettings {
  const raw = model.backend.kind === 'reference' ? (model.backend.settings ?? {}) : {}
  const parsed = safeParse(EngineSettingsSchema, raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = ['settings', ...(issue?.path ?? [])].map(String).join('.')
    logger.error('catalog model has invalid engine settings', { model: model.id, issues: parsed.error.issues })
    throw misconfigured(
      `The model \`${model.id}\` is misconfigured: its engine settings are invalid (${field}: ${issue?.message ?? 'invalid'})`,
    )
  }
  const s: EngineSettings = parsed.data
  return {
    id: model.id,
    maxModelLen: maxModelLenOf(model) ?? DEFAULT_MAX_MODEL_LEN,
    chatTemplate: model.hasChatTemplate === false ? null : s.chatTemplate,
    maxConcurrency: s.maxConcurrency ?? 8,
    maxN: s.maxN ?? DEFAULT_MAX_N,
    maxLogprobs: s.maxLogprobs ?? 20,
    contextWeight: s.contextWeight ?? 0.5,
    prefixCacheBlocks: s.prefixCacheBlocks ?? 4096,
    promptTokensDetails: s.promptTokensDetails ?? true,
    scheduling: model.scheduling ?? 'fcfs',
    generationConfig: s.generationConfig ?? {},
  }
}

/** The catalog entry of the default local model, registered at start (`loom/reference-1`). */
export function referenceCatalogModel(overrides: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id: 'loom/reference-1',
    backend: { kind: 'reference', settings: {} },
    ownedBy: 'loom',
    created: 0,
    root: 'loom/reference-1',
    maxModelLen: DEFAULT_MAX_MODEL_LEN,
    hasChatTemplate: true,
    scheduling: 'fcfs',
    entities: ['*'],
    ...overrides,
  }
}
