import * as z from 'zod/mini'
import { LaxBoolSchema, LaxIntSchema, LaxNumberSchema } from '#shared/schemas/pydantic-lax'

// Shapes of `POST /v1/chat/completions` (docs/inference.md §2). Request fields are validated for type only here;
// the cross-field rules (docs/inference.md §3) and exact messages live in shared/inference/validate-request.ts.
// No defaults are applied: an absent field stays absent, so the openai-compatible backend forwards only what the
// client set, and `chatDefaults()` gives the effective values for an engine.

const nullish = <T extends z.core.$ZodType>(schema: T) => z.optional(z.nullable(schema))

// Scalars are pydantic's lax `int`, `float` and `bool` (shared/schemas/pydantic-lax.ts): "0.5", "5" and "true" are
// accepted as vLLM accepts them, and the request carries the converted values. Bounds are the request validator's.
const IntSchema = LaxIntSchema

// A plain string is a text part (vLLM's part union ends with `str`). An object's `type` is read by the chat layer's
// rules (shared/inference/message-rules.ts), which answer a missing, invalid or unknown type as vLLM's parser does.
const ContentPartSchema = z.union([z.string(), z.looseObject({ type: z.optional(z.unknown()) })])
/** One part of a message's content list. */
export type ContentPart = z.infer<typeof ContentPartSchema>

/**
 * One chat message: system, user, assistant, tool, developer, function or any other role string (vLLM's
 * `CustomChatCompletionMessageParam`, e.g. `ipython`), which the model's chat template renders; extra keys such as
 * `name` pass through.
 */
export const ChatMessageSchema = z.looseObject({
  role: z.string(),
  content: nullish(z.union([z.string(), z.array(ContentPartSchema)])),
  name: z.optional(z.string()),
  reasoning: nullish(z.string()),
  reasoning_content: nullish(z.string()),
  // vLLM's `CustomChatCompletionMessageParam` takes `tool_call_id: str | None`.
  tool_call_id: nullish(z.string()),
  tool_calls: nullish(z.array(z.looseObject({}))),
})
export type ChatMessage = z.infer<typeof ChatMessageSchema>

const JsonSchemaFormatSchema = z.looseObject({
  name: z.string(),
  description: nullish(z.string()),
  schema: nullish(z.record(z.string(), z.unknown())),
  strict: nullish(LaxBoolSchema),
})

/** `response_format`: text, json_object, json_schema, structural_tag (new `format` or legacy `structures`). */
export const ResponseFormatSchema = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), json_schema: nullish(JsonSchemaFormatSchema) }),
  z.looseObject({
    type: z.literal('structural_tag'),
    format: z.optional(z.unknown()),
    structures: z.optional(
      z.array(
        z.looseObject({ begin: z.string(), schema: nullish(z.record(z.string(), z.unknown())), end: z.string() }),
      ),
    ),
    triggers: z.optional(z.array(z.string())),
  }),
])
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>

/** One tool definition (validated, but tool calling stays off: `tool_choice` is always `"none"`). */
export const ToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string(),
    description: nullish(z.string()),
    parameters: nullish(z.record(z.string(), z.unknown())),
    strict: nullish(LaxBoolSchema),
  }),
})

/** `stream_options`: whether to send a usage chunk, and usage on every chunk. */
export const StreamOptionsSchema = z.looseObject({
  include_usage: nullish(LaxBoolSchema),
  continuous_usage_stats: nullish(LaxBoolSchema),
})

/** `repetition_detection` (docs/inference.md §8). */
export const RepetitionDetectionSchema = z.looseObject({
  max_pattern_size: z.optional(IntSchema),
  min_pattern_size: z.optional(IntSchema),
  min_count: z.optional(IntSchema),
})

/**
 * `structured_outputs` (vLLM's `StructuredOutputsParams`): the constraint keys are read by the serving rules and the
 * backend; the flags are typed here so that they are coerced as pydantic coerces them.
 */
export const StructuredOutputsSchema = z.looseObject({
  json_object: nullish(LaxBoolSchema),
  disable_any_whitespace: z.optional(LaxBoolSchema),
  disable_additional_properties: z.optional(LaxBoolSchema),
})

const XargValueSchema = z.union([z.string(), z.number(), z.array(z.union([z.string(), z.number()]))])

/** The validated chat-completion request; unknown fields are kept on the object but never read or forwarded. */
export const ChatCompletionRequestSchema = z.looseObject({
  messages: z.array(ChatMessageSchema),
  model: nullish(z.string()),
  frequency_penalty: nullish(LaxNumberSchema),
  presence_penalty: nullish(LaxNumberSchema),
  logit_bias: nullish(z.record(z.string(), LaxNumberSchema)),
  logprobs: nullish(LaxBoolSchema),
  top_logprobs: nullish(IntSchema),
  max_tokens: nullish(IntSchema),
  max_completion_tokens: nullish(IntSchema),
  n: nullish(IntSchema),
  response_format: nullish(ResponseFormatSchema),
  seed: nullish(IntSchema),
  stop: nullish(z.union([z.string(), z.array(z.string())])),
  stream: nullish(LaxBoolSchema),
  stream_options: nullish(StreamOptionsSchema),
  temperature: nullish(LaxNumberSchema),
  top_p: nullish(LaxNumberSchema),
  top_k: nullish(IntSchema),
  min_p: nullish(LaxNumberSchema),
  repetition_penalty: nullish(LaxNumberSchema),
  tools: nullish(z.array(ToolSchema)),
  tool_choice: nullish(z.unknown()),
  reasoning_effort: nullish(z.enum(['low', 'medium', 'high'])),
  include_reasoning: z.optional(LaxBoolSchema),
  parallel_tool_calls: nullish(LaxBoolSchema),
  user: nullish(z.string()),
  use_beam_search: z.optional(LaxBoolSchema),
  length_penalty: z.optional(LaxNumberSchema),
  prompt_logprobs: nullish(IntSchema),
  stop_token_ids: nullish(z.array(IntSchema)),
  include_stop_str_in_output: z.optional(LaxBoolSchema),
  ignore_eos: z.optional(LaxBoolSchema),
  min_tokens: z.optional(IntSchema),
  skip_special_tokens: z.optional(LaxBoolSchema),
  spaces_between_special_tokens: z.optional(LaxBoolSchema),
  truncate_prompt_tokens: nullish(IntSchema),
  allowed_token_ids: nullish(z.array(IntSchema)),
  bad_words: z.optional(z.array(z.string())),
  echo: z.optional(LaxBoolSchema),
  add_generation_prompt: z.optional(LaxBoolSchema),
  continue_final_message: z.optional(LaxBoolSchema),
  add_special_tokens: z.optional(LaxBoolSchema),
  documents: nullish(z.array(z.record(z.string(), z.string()))),
  chat_template: nullish(z.string()),
  chat_template_kwargs: nullish(z.record(z.string(), z.unknown())),
  mm_processor_kwargs: nullish(z.record(z.string(), z.unknown())),
  structured_outputs: nullish(StructuredOutputsSchema),
  priority: z.optional(IntSchema),
  request_id: z.optional(z.string()),
  return_tokens_as_token_ids: nullish(LaxBoolSchema),
  return_token_ids: nullish(LaxBoolSchema),
  cache_salt: nullish(z.unknown()),
  kv_transfer_params: nullish(z.record(z.string(), z.unknown())),
  engine_xargs: nullish(z.record(z.string(), XargValueSchema)),
  repetition_detection: nullish(RepetitionDetectionSchema),
})
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>

/**
 * The contract's effective defaults (docs/inference.md §2.1), applied where the request leaves a field absent or null.
 */
export const CHAT_DEFAULTS = {
  frequency_penalty: 0,
  presence_penalty: 0,
  logprobs: false,
  top_logprobs: 0,
  n: 1,
  stream: false,
  temperature: 1,
  top_p: 1,
  top_k: 0,
  min_p: 0,
  repetition_penalty: 1,
  include_reasoning: true,
  parallel_tool_calls: true,
  use_beam_search: false,
  length_penalty: 1,
  include_stop_str_in_output: false,
  ignore_eos: false,
  min_tokens: 0,
  skip_special_tokens: true,
  spaces_between_special_tokens: true,
  echo: false,
  add_generation_prompt: true,
  continue_final_message: false,
  add_special_tokens: false,
  priority: 0,
} as const

/** The output-length limit the client asked for: `max_completion_tokens` wins over the deprecated `max_tokens`. */
export function requestedMaxTokens(request: ChatCompletionRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined
}

// The answers below are documented, not parsed: `/openapi.json` shows them (the 200 of `POST /v1/chat/completions`,
// JSON and SSE) and the code builds values of their types. An optional key is absent, never `undefined`, as the
// types stated before these schemas had it (exactOptionalPropertyTypes).
const absentOrNull = <T extends z.core.$ZodType>(schema: T) => z.exactOptional(z.nullable(schema))

/** Usage counts of one completion (non-streaming body, usage chunk, continuous usage). */
export const ChatUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  prompt_tokens_details: absentOrNull(z.object({ cached_tokens: z.number() })),
  completion_tokens_details: absentOrNull(z.object({ reasoning_tokens: z.number() })),
})
export type ChatUsage = z.infer<typeof ChatUsageSchema>

/** The assistant message of a non-streaming choice (docs/inference.md §5): every key present, nulls included. */
export const ChatResponseMessageSchema = z.object({
  role: z.string(),
  content: z.nullable(z.string()),
  refusal: z.null(),
  annotations: z.null(),
  audio: z.null(),
  function_call: z.null(),
  reasoning: z.nullable(z.string()),
  tool_calls: z.exactOptional(z.array(z.unknown())),
})
export type ChatResponseMessage = z.infer<typeof ChatResponseMessageSchema>

const StopReasonSchema = z.nullable(z.union([z.string(), z.number()]))
const TokenIdsSchema = z.nullable(z.array(z.number()))

/** One choice of a non-streaming response. */
export const ChatChoiceSchema = z.object({
  index: z.number(),
  message: ChatResponseMessageSchema,
  logprobs: z.unknown(),
  finish_reason: z.nullable(z.string()),
  stop_reason: StopReasonSchema,
  token_ids: TokenIdsSchema,
})
export type ChatChoice = z.infer<typeof ChatChoiceSchema>

/** The non-streaming response body (`ChatCompletionResponse`, docs/inference.md §5). */
export const ChatCompletionResponseSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(ChatChoiceSchema),
  service_tier: z.null(),
  system_fingerprint: z.nullable(z.string()),
  usage: ChatUsageSchema,
  prompt_logprobs: z.unknown(),
  prompt_token_ids: TokenIdsSchema,
  kv_transfer_params: z.unknown(),
})
export type ChatCompletionResponse = z.infer<typeof ChatCompletionResponseSchema>

/** A streamed delta (docs/inference.md §6.2). */
export const ChatDeltaSchema = z.object({
  role: z.exactOptional(z.string()),
  content: absentOrNull(z.string()),
  reasoning: absentOrNull(z.string()),
  tool_calls: z.exactOptional(z.array(z.unknown())),
})
export type ChatDelta = z.infer<typeof ChatDeltaSchema>

/** One choice of a stream chunk; `stop_reason` appears on the finish chunk only, `token_ids` with `return_token_ids`. */
export const ChatChunkChoiceSchema = z.object({
  index: z.number(),
  delta: ChatDeltaSchema,
  logprobs: z.unknown(),
  finish_reason: z.nullable(z.string()),
  stop_reason: z.exactOptional(StopReasonSchema),
  token_ids: z.exactOptional(TokenIdsSchema),
})
export type ChatChunkChoice = z.infer<typeof ChatChunkChoiceSchema>

/** One SSE chunk (`chat.completion.chunk`, docs/inference.md §6); `choices: []` with `usage` is the usage chunk. */
export const ChatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number(),
  model: z.string(),
  choices: z.array(ChatChunkChoiceSchema),
  usage: absentOrNull(ChatUsageSchema),
  prompt_token_ids: absentOrNull(z.array(z.number())),
  system_fingerprint: absentOrNull(z.string()),
})
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunkSchema>
