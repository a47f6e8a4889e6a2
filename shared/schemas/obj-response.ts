import * as z from 'zod/mini'
import { ObjOutSchema } from '#shared/schemas/obj'

/** `POST /obj/create` answer. */
export const ObjCreateResSchema = z.object({ digest: z.string(), object_id: z.nullable(z.string()) })
export type ObjCreateRes = z.infer<typeof ObjCreateResSchema>

/** `POST /obj/read` answer. */
export const ObjReadResSchema = z.object({ obj: ObjOutSchema })
export type ObjReadRes = z.infer<typeof ObjReadResSchema>

/** `POST /objs/query` answer. */
export const ObjQueryResSchema = z.object({ objs: z.array(ObjOutSchema) })
export type ObjQueryRes = z.infer<typeof ObjQueryResSchema>

/** `POST /obj/delete` answer: the versions deleted. */
export const ObjDeleteResSchema = z.object({
  num_deleted: z.number(),
  deleted_versions: z.array(
    z.object({
      digest: z.string(),
      base_object_class: z.nullable(z.string()),
      leaf_object_class: z.nullable(z.string()),
    }),
  ),
})
export type ObjDeleteRes = z.infer<typeof ObjDeleteResSchema>

/** `GET /tags` answer. */
export const TagsResSchema = z.object({ tags: z.array(z.string()) })
export type TagsRes = z.infer<typeof TagsResSchema>

/** `GET /aliases` answer. */
export const AliasesResSchema = z.object({ aliases: z.array(z.string()) })
export type AliasesRes = z.infer<typeof AliasesResSchema>
