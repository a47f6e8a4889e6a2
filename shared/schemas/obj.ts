import * as z from 'zod/mini'
import { LaxBoolSchema, LaxIntSchema } from '#shared/schemas/pydantic-lax'

const nullableString = () => z.optional(z.nullable(z.string()))

/** Weave's object name rule: word characters, dots and dashes, at most 128 characters. */
export const ObjectIdSchema = z.string().check(
  z.refine((s) => s.length > 0, 'Object name cannot be empty'),
  z.refine((s) => s.length <= 128, 'String too long, max length is 128'),
  z.refine((s) => s.length === 0 || /^[\p{L}\p{N}_.-]+$/u.test(s), 'Invalid object name: contains invalid characters'),
)

/** `ObjCreateReq`: one object version to publish (`val` required, any JSON). */
export const ObjCreateReqSchema = z.looseObject({
  obj: z.looseObject({
    project_id: z.string(),
    object_id: ObjectIdSchema,
    val: z.unknown().check(z.refine((v) => v !== undefined, 'Field required')),
    builtin_object_class: nullableString(),
    set_base_object_class: nullableString(),
    expected_digest: nullableString(),
    wb_user_id: nullableString(),
  }),
})
export type ObjCreateReq = z.infer<typeof ObjCreateReqSchema>

/** `ObjReadReq`. */
export const ObjReadReqSchema = z.looseObject({
  project_id: z.string(),
  object_id: z.string(),
  digest: z.string(),
  metadata_only: z._default(z.nullable(LaxBoolSchema), false),
  include_tags_and_aliases: z._default(z.nullable(LaxBoolSchema), false),
})
export type ObjReadReq = z.infer<typeof ObjReadReqSchema>

/** `SortBy`: a field and a direction. */
export const SortBySchema = z.looseObject({ field: z.string(), direction: z.enum(['asc', 'desc']) })
export type SortBy = z.infer<typeof SortBySchema>

const stringList = () => z.optional(z.nullable(z.array(z.string())))

/** `ObjectVersionFilter`. */
export const ObjectVersionFilterSchema = z.looseObject({
  base_object_classes: stringList(),
  exclude_base_object_classes: stringList(),
  leaf_object_classes: stringList(),
  object_ids: stringList(),
  is_op: z.optional(z.nullable(LaxBoolSchema)),
  latest_only: z.optional(z.nullable(LaxBoolSchema)),
  tags: stringList(),
  aliases: stringList(),
})
export type ObjectVersionFilter = z.infer<typeof ObjectVersionFilterSchema>

/** `ObjQueryReq`. */
export const ObjQueryReqSchema = z.looseObject({
  project_id: z.string(),
  filter: z.optional(z.nullable(ObjectVersionFilterSchema)),
  limit: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  offset: z.optional(z.nullable(z.pipe(LaxIntSchema, z.int().check(z.nonnegative())))),
  sort_by: z.optional(z.nullable(z.array(SortBySchema))),
  metadata_only: z._default(z.nullable(LaxBoolSchema), false),
  include_storage_size: z._default(z.nullable(LaxBoolSchema), false),
  include_tags_and_aliases: z._default(z.nullable(LaxBoolSchema), false),
})
export type ObjQueryReq = z.infer<typeof ObjQueryReqSchema>

/** `ObjDeleteReq`: `digests` null deletes every version. */
export const ObjDeleteReqSchema = z.looseObject({
  project_id: z.string(),
  object_id: z.string(),
  digests: stringList(),
})
export type ObjDeleteReq = z.infer<typeof ObjDeleteReqSchema>

const TAG_RE = /^[A-Za-z0-9_-]+( [A-Za-z0-9_-]+)*$/

/** A version tag: `[A-Za-z0-9_-]` words separated by single spaces, at most 256 characters. */
export const TagSchema = z.string().check(
  z.refine((s) => s.length > 0, 'Tag must not be empty'),
  z.refine((s) => s.length <= 256, 'Tag must be at most 256 characters'),
  z.refine(
    (s) => s.length === 0 || TAG_RE.test(s),
    'Tag may only contain letters, digits, underscores, hyphens and single inner spaces',
  ),
)

/** An object alias: any name except `latest`, version-like names and ones containing `/` or `:`. */
export const AliasSchema = z.string().check(
  z.refine((s) => s.trim().length > 0, 'Alias must not be empty'),
  z.refine((s) => s.length <= 128, 'Alias must be at most 128 characters'),
  z.refine((s) => !/[/:]/.test(s), "Alias must not contain '/' or ':'"),
  z.refine((s) => s !== 'latest', "'latest' is a reserved alias"),
  z.refine((s) => !/^v\d+$/.test(s), 'Alias must not look like a version (v<N>)'),
)

/** Body of `PUT /objs/{object_id}/versions/{digest}/tags` and its `remove` twin. */
export const ObjTagsBodySchema = z.looseObject({ project_id: z.string(), tags: z.array(TagSchema) })
export type ObjTagsBody = z.infer<typeof ObjTagsBodySchema>

/** Body of `PUT /objs/{object_id}/aliases`. */
export const ObjSetAliasesBodySchema = z.looseObject({
  project_id: z.string(),
  digest: z.string(),
  aliases: z.array(AliasSchema),
})
export type ObjSetAliasesBody = z.infer<typeof ObjSetAliasesBodySchema>

/** Body of `POST /objs/{object_id}/aliases/remove`. */
export const ObjRemoveAliasesBodySchema = z.looseObject({ project_id: z.string(), aliases: z.array(z.string()) })
export type ObjRemoveAliasesBody = z.infer<typeof ObjRemoveAliasesBodySchema>

/** `?project_id=` of the GET listings. */
export const ProjectQuerySchema = z.looseObject({ project_id: z.string() })

/** A stored object version (one DynamoDB item; `val` is JSON text, kept whole). */
export const ObjVersionSchema = z.object({
  project_id: z.string(),
  object_id: z.string(),
  digest: z.string(),
  kind: z.enum(['op', 'object']),
  base_object_class: z.nullable(z.string()),
  leaf_object_class: z.nullable(z.string()),
  created_at: z.string(),
  deleted_at: z.optional(z.nullable(z.string())),
  wb_user_id: z.optional(z.nullable(z.string())),
  size_bytes: z.number(),
  version_index: z.optional(z.number()),
  /** The stored value holds numbers `JSON.parse` would change (`1.0`, integers beyond 2^53); absent when written before. */
  val_exact: z.optional(z.boolean()),
})
export type ObjVersion = z.infer<typeof ObjVersionSchema>

/** `ObjSchema` as returned by `obj/read` and `objs/query`. */
export const ObjOutSchema = z.object({
  project_id: z.string(),
  object_id: z.string(),
  created_at: z.string(),
  deleted_at: z.nullable(z.string()),
  digest: z.string(),
  version_index: z.number(),
  is_latest: z.union([z.literal(0), z.literal(1)]),
  kind: z.enum(['op', 'object']),
  base_object_class: z.nullable(z.string()),
  leaf_object_class: z.nullable(z.string()),
  val: z.unknown(),
  wb_user_id: z.nullable(z.string()),
  size_bytes: z.nullable(z.number()),
  tags: z.nullable(z.array(z.string())),
  aliases: z.nullable(z.array(z.string())),
})
export type ObjOut = z.infer<typeof ObjOutSchema>
