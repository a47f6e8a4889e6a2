import { z } from 'zod/mini'

// Request shapes of `POST /v1/preview/models/{model_id}/log` (contract training-log.md §2). Objects are loose: unknown
// keys are accepted and kept, as FastAPI would ignore them and the stored group must stay whole.

const MetricValueSchema = z.union([z.number(), z.boolean()])
const MetadataValueSchema = z.union([z.number(), z.string(), z.boolean(), z.null()])

/** Trajectory and group metrics: numbers or booleans (booleans count as 1/0). */
export const MetricsMapSchema = z.record(z.string(), MetricValueSchema)

/** Free-form metadata: scalars only. */
export const MetadataMapSchema = z.record(z.string(), MetadataValueSchema)

/** `ChatCompletionFunctionToolParam`. */
export const ToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string(),
    description: z.optional(z.string()),
    parameters: z.optional(z.record(z.string(), z.unknown())),
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
  message: z.looseObject({ role: z.literal('assistant'), ...AssistantFieldsShape }),
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

/** One RL trajectory (contract §2.3). */
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

/** A group of trajectories for one prompt, with ART's extra keys (contract §2.2). */
export const TrajectoryGroupSchema = z.looseObject({
  trajectories: z.array(TrajectorySchema),
  exceptions: z.optional(z.array(TrajectoryExceptionSchema)),
  metadata: z.optional(MetadataMapSchema),
  metrics: z.optional(MetricsMapSchema),
  logs: z.optional(z.array(z.string())),
})
export type TrajectoryGroup = z.infer<typeof TrajectoryGroupSchema>

/** The body of a log call; `model_id` in the body is accepted and ignored (the path wins). */
export const LogRequestSchema = z.looseObject({
  split: z.string(),
  trajectory_groups: z.array(TrajectoryGroupSchema),
  model_id: z.optional(z.nullable(z.string())),
})
export type LogRequest = z.infer<typeof LogRequestSchema>

/** Metric values keyed `<split>/<key>`. */
export const MetricValuesSchema = z.record(z.string(), z.number())
export type MetricValues = z.infer<typeof MetricValuesSchema>

/** The answer to a log call: the computed metrics with the step and counts. */
export const LogResponseSchema = z.object({
  log_id: z.string(),
  model_id: z.string(),
  split: z.string(),
  step: z.int(),
  recorded_at: z.string(),
  metrics: MetricValuesSchema,
  group_count: z.int(),
  trajectory_count: z.int(),
  exception_count: z.int(),
})
export type LogResponse = z.infer<typeof LogResponseSchema>

/** Query of `GET /v1/preview/models/{model_id}/metrics`. */
export const MetricsQuerySchema = z.object({
  split: z.optional(z.string()),
  after_step: z.optional(z.string().check(z.regex(/^-?\d{1,15}$/))),
})

/** The stored record of one log call: its metrics (history row) and where its groups' chunks live. */
export const LogRecordSchema = z.object({
  modelId: z.string(),
  logId: z.string(),
  split: z.string(),
  step: z.int(),
  recordedAt: z.string(),
  metrics: MetricValuesSchema,
  groupCount: z.int(),
  trajectoryCount: z.int(),
  exceptionCount: z.int(),
  /** Chunk count of each group, in request order. */
  chunks: z.array(z.int()),
  /** How each group's JSON bytes are encoded before chunking. */
  codec: z.literal('gzip'),
})
export type LogRecord = z.infer<typeof LogRecordSchema>

/** An in-flight or finished idempotent log call, keyed by the caller's `Idempotency-Key`. */
export const IdempotencyRecordSchema = z.object({
  bodyHash: z.string(),
  logId: z.string(),
  step: z.int(),
  recordedAt: z.string(),
  response: z.optional(LogResponseSchema),
})
export type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>
