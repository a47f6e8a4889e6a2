import * as z from 'zod/mini'

/** `GET /health` answer. */
export const HealthResSchema = z.object({ status: z.literal('ok') })
export type HealthRes = z.infer<typeof HealthResSchema>

/** `GET /server_info` answer: the Weave client versions this server supports. */
export const ServerInfoResSchema = z.object({
  min_required_weave_python_version: z.string(),
  trace_server_version: z.nullable(z.string()),
})
export type ServerInfoRes = z.infer<typeof ServerInfoResSchema>
