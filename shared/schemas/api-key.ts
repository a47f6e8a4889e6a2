import * as z from 'zod/mini'
import { RateLimitsSchema } from '#shared/schemas/rate-limit'

/** Identifiers of users and entities: what W&B accepts in a name, kept safe inside DynamoDB keys. */
export const NameSchema = z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/))

/** A stored API key: only its SHA-256 digest is kept, never the plaintext. */
export const ApiKeyRecordSchema = z.object({
  keyId: z.string(),
  keyHash: z.string(),
  userId: z.string(),
  entity: z.string(),
  name: z.optional(z.string()),
  createdAt: z.string(),
  revokedAt: z.optional(z.string()),
  /** Per-key limits (docs/architecture.md, Rate limits); absent means unlimited. */
  rpm: RateLimitsSchema.shape.rpm,
  tpm: RateLimitsSchema.shape.tpm,
  concurrency: RateLimitsSchema.shape.concurrency,
})
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>

/** A user's membership of an entity (team). */
export const MembershipSchema = z.object({
  userId: z.string(),
  entity: z.string(),
  role: z.string(),
  addedAt: z.string(),
})
export type Membership = z.infer<typeof MembershipSchema>

/**
 * Who is calling: the authenticated user, the key used, the key's entity, every entity the user belongs to and the
 * key's limits.
 */
export const PrincipalSchema = z.object({
  userId: z.string(),
  keyId: z.string(),
  entity: z.string(),
  entities: z.array(z.string()),
  /** The key's limits, present only when at least one is set, so unlimited keys cost no limiter I/O. */
  limits: z.optional(RateLimitsSchema),
})
export type Principal = z.infer<typeof PrincipalSchema>
