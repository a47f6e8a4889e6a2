import { randomUUID } from 'node:crypto'
import { app as createModelApp } from '#functions/training/create-preview-model/handler'
import { jsonInit, type TestCaller } from './auth.js'

/** A model as the preview endpoints return it. */
export type ModelView = { id: string; entity: string; project: string; name: string; base_model: string }

/** Registers a fresh preview model for the caller through `POST /v1/preview/models`. */
export async function newModel(caller: TestCaller, project = 'rl'): Promise<ModelView> {
  const res = await createModelApp.request(
    '/v1/preview/models',
    jsonInit(
      { entity: caller.entity, project, name: `m-${randomUUID().slice(0, 8)}`, base_model: 'Qwen/Qwen2.5-7B-Instruct' },
      caller.bearer,
    ),
  )
  if (res.status !== 200) throw new Error(`model create failed: ${res.status} ${await res.text()}`)
  return (await res.json()) as ModelView
}

/** A trajectory with a short chat and one trainable turn (a `Choice`). */
export function trajectory(reward: number, metrics: Record<string, number | boolean> = {}): Record<string, unknown> {
  return {
    messages_and_choices: [
      { role: 'system', content: 'You are a careful solver.' },
      { role: 'user', content: 'What is 2 + 2?' },
      { finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: '4' } },
    ],
    reward,
    metrics,
    metadata: {},
    logs: [],
    tools: null,
    additional_histories: [],
  }
}
