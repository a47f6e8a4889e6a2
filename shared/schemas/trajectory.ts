import * as z from 'zod/mini'
import { ZodMiniRecord } from 'zod/mini'

// Request shapes of `POST /v1/preview/models/{model_id}/log` (docs/training.md §2). Objects are loose: unknown
// keys are accepted and kept, as FastAPI would ignore them and the stored group must stay whole.

type JsonDict<V extends z.core.$ZodType> = z.ZodMiniRecord<z.ZodMiniString, V>

// zod's record skips a `__proto__` key, unvalidated and left out of its output (it builds a plain `{}`, where the key
// would set the prototype), while pydantic's dict keeps it like any other. This record validates every own key of the
// JSON object and builds a null-prototype object, where `__proto__` is an ordinary property (JSON.stringify keeps it).
// It is still a record to zod, so the OpenAPI schema and the inferred type are the record's.
const $JsonDict = z.core.$constructor<z.ZodMiniRecord>('JsonDict', (inst, def) => {
  ZodMiniRecord.init(inst, def)
  inst._zod.parse = (payload, ctx) => {
    const input = payload.value
    if (!z.core.util.isPlainObject(input)) {
      payload.issues.push({ code: 'invalid_type', expected: 'record', input, inst })
      return payload
    }
    const out: Record<string, unknown> = Object.create(null)
    for (const key of Object.keys(input)) {
      const result = def.valueType._zod.run({ value: input[key], issues: [] }, ctx)
      if (result instanceof Promise) throw new Error('A JSON dict takes synchronous value schemas only')
      if (result.issues.length > 0) payload.issues.push(...z.core.util.prefixIssues(key, result.issues))
      out[key] = result.value
    }
    payload.value = out
    return payload
  }
})

/** A JSON object of `valueType` values under any keys, `__proto__` included (pydantic's `dict[str, V]`). */
function jsonDict<V extends z.core.$ZodType>(valueType: V): JsonDict<V> {
  return new $JsonDict({ type: 'record', keyType: z.string(), valueType }) as unknown as JsonDict<V>
}

const MetricValueSchema = z.union([z.number(), z.boolean()])
const MetadataValueSchema = z.union([z.number(), z.string(), z.boolean(), z.null()])

/** Trajectory and group metrics: numbers or booleans (booleans count as 1/0). */
export const MetricsMapSchema = jsonDict(MetricValueSchema)

/** Free-form metadata: scalars only. */
export const MetadataMapSchema = jsonDict(MetadataValueSchema)

/** `ChatCompletionFunctionToolParam`. */
export const ToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string(),
    description: z.optional(z.string()),
    parameters: z.optional(jsonDict(z.unknown())),
    strict: z.optional(z.nullable(z.boolean())),
  }),
})

const ContentPartsSchema = z.array(z.looseObject({ type: z.string() }))
const ContentSchema = z.union([z.string(), ContentPartsSchema])

const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
})

const AssistantFieldsShape = {
  content: z.optional(z.nullable(ContentSchema)),
  refusal: z.optional(z.nullable(z.string())),
  name: z.optional(z.string()),
  tool_calls: z.optional(z.nullable(z.array(ToolCallSchema))),
}

/** An OpenAI chat message param, told apart by its `role`. */
export const MessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: ContentSchema, name: z.optional(z.string()) }),
  z.looseObject({ role: z.literal('developer'), content: ContentSchema, name: z.optional(z.string()) }),
  z.looseObject({ role: z.literal('user'), content: ContentSchema, name: z.optional(z.string()) }),
  z.looseObject({ role: z.literal('assistant'), ...AssistantFieldsShape }),
  z.looseObject({ role: z.literal('tool'), content: ContentSchema, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal('function'), content: z.nullable(z.string()), name: z.string() }),
])

const TopLogprobSchema = z.looseObject({
  token: z.string(),
  logprob: z.number(),
  bytes: z.optional(z.nullable(z.array(z.int()))),
})

const TokenLogprobSchema = z.looseObject({
  token: z.string(),
  logprob: z.number(),
  bytes: z.optional(z.nullable(z.array(z.int()))),
  top_logprobs: z.array(TopLogprobSchema),
})

/** An OpenAI chat-completion `Choice`: a trainable assistant turn. */
export const ChoiceSchema = z.looseObject({
  finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']),
  index: z.int(),
  logprobs: z.optional(
    z.nullable(
      z.looseObject({
        content: z.optional(z.nullable(z.array(TokenLogprobSchema))),
        refusal: z.optional(z.nullable(z.array(TokenLogprobSchema))),
      }),
    ),
  ),
  // A completion's message (docs/training.md §2.5): its content is text or null, never content parts.
  message: z.looseObject({
    role: z.literal('assistant'),
    ...AssistantFieldsShape,
    content: z.optional(z.nullable(z.string())),
  }),
})

/**
 * One entry of `messages_and_choices`. `Choice` is tried first: an item without `role` whose choice fields are wrong
 * then reports the choice's errors (a tie on issue count keeps the first branch), while a `role` item reports the
 * message's.
 */
export const MessageOrChoiceSchema = z.union([ChoiceSchema, MessageSchema])

/** An additional conversation of a trajectory. */
export const HistorySchema = z.looseObject({
  messages_and_choices: z.array(MessageOrChoiceSchema),
  tools: z.optional(z.nullable(z.array(ToolSchema))),
})

/** One RL trajectory (docs/training.md §2.3). */
export const TrajectorySchema = z.looseObject({
  messages_and_choices: z.array(MessageOrChoiceSchema),
  reward: z.number(),
  tools: z.optional(z.nullable(z.array(ToolSchema))),
  additional_histories: z.optional(z.array(HistorySchema)),
  initial_policy_version: z.optional(z.nullable(z.int())),
  final_policy_version: z.optional(z.nullable(z.int())),
  metrics: z.optional(MetricsMapSchema),
  auto_metrics: z.optional(MetricsMapSchema),
  metadata: z.optional(MetadataMapSchema),
  logs: z.optional(z.array(z.string())),
  start_time: z.optional(z.iso.datetime({ offset: true, local: true })),
})
export type Trajectory = z.infer<typeof TrajectorySchema>

/** An exception an ART client moved out of a group's items. */
export const TrajectoryExceptionSchema = z.looseObject({ type: z.string(), message: z.string(), traceback: z.string() })

/** A group of trajectories for one prompt, with ART's extra keys (docs/training.md §2.2). */
export const TrajectoryGroupSchema = z.looseObject({
  trajectories: z.array(TrajectorySchema),
  exceptions: z.optional(z.array(TrajectoryExceptionSchema)),
  metadata: z.optional(MetadataMapSchema),
  metrics: z.optional(MetricsMapSchema),
  logs: z.optional(z.array(z.string())),
})
export type TrajectoryGroup = z.infer<typeof TrajectoryGroupSchema>
