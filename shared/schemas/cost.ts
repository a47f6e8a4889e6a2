import * as z from 'zod/mini'
import { SortBySchema } from '#shared/schemas/call'
import { DatetimeSchema } from '#shared/schemas/datetime'
import { LaxIntSchema } from '#shared/schemas/pydantic-lax'
import { QuerySchema } from '#shared/schemas/query'

// Costs are stored as DynamoDB numbers: the SDK refuses magnitudes past 2^53 and the table those under 1e-130.
const StoredNumberSchema = z
  .number()
  .check(
    z.refine(
      (n) => Math.abs(n) <= Number.MAX_SAFE_INTEGER && (n === 0 || Math.abs(n) >= 1e-130),
      'Input should be a number between -2^53 and 2^53',
    ),
  )

/** One price in `POST /cost/create`. */
export const CostCreateInputSchema = z.object({
  prompt_token_cost: StoredNumberSchema,
  completion_token_cost: StoredNumberSchema,
  cache_read_input_token_cost: z._default(StoredNumberSchema, 0),
  cache_creation_input_token_cost: z._default(StoredNumberSchema, 0),
  prompt_token_cost_unit: z.optional(z.nullable(z.string())),
  completion_token_cost_unit: z.optional(z.nullable(z.string())),
  effective_date: z.optional(z.nullable(DatetimeSchema)),
  provider_id: z.optional(z.nullable(z.string())),
})

/** `POST /cost/create` body. */
export const CostCreateReqSchema = z.object({
  project_id: z.string(),
  costs: z.record(z.string(), CostCreateInputSchema),
  wb_user_id: z.optional(z.nullable(z.string())),
})
export type CostCreateReq = z.infer<typeof CostCreateReqSchema>

/** `POST /cost/query` body. */
export const CostQueryReqSchema = z.object({
  project_id: z.string(),
  fields: z.optional(z.nullable(z.array(z.string()))),
  query: z.optional(z.nullable(QuerySchema)),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  limit: z.optional(z.nullable(LaxIntSchema)),
  offset: z.optional(z.nullable(LaxIntSchema)),
})
export type CostQueryReq = z.infer<typeof CostQueryReqSchema>

/** `POST /cost/purge` body. */
export const CostPurgeReqSchema = z.object({ project_id: z.string(), query: QuerySchema })

/** A stored (or built-in default) price row; datetimes in storage form. */
export const PriceRowSchema = z.object({
  id: z.string(),
  llm_id: z.string(),
  prompt_token_cost: z.number(),
  completion_token_cost: z.number(),
  cache_read_input_token_cost: z.number(),
  cache_creation_input_token_cost: z.number(),
  prompt_token_cost_unit: z.string(),
  completion_token_cost_unit: z.string(),
  effective_date: z.string(),
  provider_id: z.string(),
  pricing_level: z.string(),
  pricing_level_id: z.string(),
  created_at: z.string(),
  created_by: z.string(),
})
export type PriceRow = z.infer<typeof PriceRowSchema>
