/**
 * Placeholder ids the route examples (`example` in each `route.ts`) share, shaped as real ones are: UUIDv7 call,
 * queue, cost and feedback ids, 43-character object, row and file digests, a 64-hex table digest (contracts/tracing.md §8–10, §17).
 */
export const EXAMPLE_IDS = {
  entity: 'my-entity',
  project: 'my-project',
  projectId: 'my-entity/my-project',
  model: 'Qwen/Qwen2.5-7B-Instruct',
  callId: '0193f1c2-8a4b-7d3e-9f10-2b3c4d5e6f70',
  traceId: '0193f1c2-8a4a-7c21-8e0f-1a2b3c4d5e6f',
  callRef: 'weave:///my-entity/my-project/call/0193f1c2-8a4b-7d3e-9f10-2b3c4d5e6f70',
  opName: 'weave:///my-entity/my-project/op/summarize:A3rq6vS78m3avnJWqClNxS2kjVdaEke1wlmMR95666s',
  objectId: 'summarize-prompt',
  objectDigest: 'dypfsEXbrThoGi9W3f29ahUYV1PfjcwCl4jQKYO2gls',
  tableDigest: '0d4fc4a78d3706edccafb665a8b2fdd9309e82c78625bb0f2b8e7bb9e1c4d21c',
  // The digest of the first row of the `table/create` example.
  rowDigest: '66Ga4hb0By0LV2n1oo8flvPzor9dbyTgk56hvFFxNHI',
  fileDigest: 'O5w1jzbwoxtq0XFPMJx88ZiskkboMWXc5UPVsZrAK4A',
  queueId: '0193f1d0-3b2a-7e4f-8a1b-9c0d1e2f3a4b',
  itemId: '0193f1d0-5c6d-7a8b-9c0d-e1f2a3b4c5d6',
  costId: '0193f1d6-2a3b-7c4d-8e5f-6a7b8c9d0e1f',
  feedbackId: '0193f1d4-1e2f-7a3b-8c4d-5e6f7a8b9c0d',
  modelId: '2f2b417b-e156-4bfc-b5fa-27581435161c',
} as const

/** A call's start as the Weave SDKs send it: the example of `call/start` and of `call/upsert_batch`'s start. */
export const EXAMPLE_CALL_START = {
  project_id: EXAMPLE_IDS.projectId,
  id: EXAMPLE_IDS.callId,
  op_name: EXAMPLE_IDS.opName,
  trace_id: EXAMPLE_IDS.traceId,
  started_at: '2026-11-27T12:00:00.000Z',
  attributes: { weave: { client_version: '0.11.0', source: 'js-sdk' } },
  inputs: { text: 'Loom serves each endpoint from its own Lambda function.' },
} as const

/** The same call's end: the example of `call/end` and of `call/upsert_batch`'s end. */
export const EXAMPLE_CALL_END = {
  project_id: EXAMPLE_IDS.projectId,
  id: EXAMPLE_IDS.callId,
  trace_id: EXAMPLE_IDS.traceId,
  ended_at: '2026-11-27T12:00:01.250Z',
  output: 'One Lambda per endpoint.',
  summary: {
    usage: { [EXAMPLE_IDS.model]: { requests: 1, prompt_tokens: 42, completion_tokens: 6, total_tokens: 48 } },
  },
} as const
