import type { Hono } from 'hono'
import { app as createApp } from '#functions/tracing/create-obj/handler'
import type { AppEnv } from '#shared/http/app-env'
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

/** Sends a JSON body given as text or a value; answers the status and the raw answer, to see numbers as written. */
export async function sendText(
  app: Hono<AppEnv>,
  path: string,
  body: unknown,
  caller: ProjectCaller,
): Promise<{ status: number; text: string }> {
  const res = await app.request(path, {
    method: 'POST',
    headers: { ...caller.basic, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, text: await res.text() }
}

/** Publishes a value given as JSON text (its numbers as written: `1.0`, big integers) and returns its digest. */
export async function publishText(caller: ProjectCaller, objectId: string, valText: string): Promise<string> {
  const body = `{"obj": {"project_id": ${JSON.stringify(caller.project)}, "object_id": "${objectId}", "val": ${valText}}}`
  const res = await sendText(createApp, '/obj/create', body, caller)
  if (res.status !== 200) throw new Error(`obj/create failed: ${res.status} ${res.text}`)
  return JSON.parse(res.text).digest
}
