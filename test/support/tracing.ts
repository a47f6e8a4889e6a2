import type { Hono } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { jsonInit, newCaller, type TestCaller } from './auth.js'

/** A caller with its own entity and a project id inside it. */
export type ProjectCaller = TestCaller & { project: string }

/** Registers a caller and names a fresh project of its entity. */
export async function newProjectCaller(): Promise<ProjectCaller> {
  const caller = await newCaller()
  return { ...caller, project: `${caller.entity}/proj` }
}

/** A response: status and parsed JSON (loosely typed: tests assert on its shape). */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions, not the type system.
export type Res = { status: number; body: any }

/** Sends a JSON request with the caller's Basic credentials; returns status and parsed body. */
export async function send(
  app: Hono<AppEnv>,
  path: string,
  body: unknown,
  caller: TestCaller,
  method = 'POST',
): Promise<Res> {
  const res = await app.request(path, jsonInit(body, caller.basic, method))
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

/** Sends a GET with the caller's credentials. */
export async function get(app: Hono<AppEnv>, path: string, caller: TestCaller): Promise<Res> {
  const res = await app.request(path, { headers: caller.basic })
  return { status: res.status, body: await res.json() }
}
