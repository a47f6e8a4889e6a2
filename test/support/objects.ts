import { app as createApp } from '#functions/tracing/create-obj/handler'
import { type ProjectCaller, send } from './tracing.js'

/** Publishes `val` as a version of `objectId` and returns its digest. */
export async function publish(caller: ProjectCaller, objectId: string, val: unknown): Promise<string> {
  const res = await send(
    createApp,
    '/obj/create',
    { obj: { project_id: caller.project, object_id: objectId, val } },
    caller,
  )
  if (res.status !== 200) throw new Error(`obj/create failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.digest
}
