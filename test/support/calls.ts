import { randomUUID } from 'node:crypto'
import { app as upsertApp } from '#functions/tracing/upsert-call-batch/handler'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { jsonInit, type TestCaller } from './auth.js'

/** A fresh project of the caller's entity. */
export function newProject(caller: TestCaller): string {
  return `${caller.entity}/p-${randomUUID().slice(0, 8)}`
}

/** A start part with sensible defaults. */
export function startPart(project: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    project_id: project,
    id: randomUUID(),
    op_name: 'weave:///e/p/op/my_op:abc',
    started_at: '2025-01-01T00:00:00Z',
    attributes: {},
    inputs: {},
    ...fields,
  }
}

/** An end part with sensible defaults. */
export function endPart(project: string, id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { project_id: project, id, ended_at: '2025-01-01T00:00:01Z', output: null, summary: {}, ...fields }
}

/** Writes calls (start and optional end) through `call/upsert_batch`, failing loudly on a non-200. */
export async function writeCalls(
  caller: TestCaller,
  calls: { start: Record<string, unknown>; end?: Record<string, unknown> }[],
): Promise<void> {
  const batch = calls.flatMap((c) => [
    { mode: 'start', req: { start: c.start } },
    ...(c.end ? [{ mode: 'end', req: { end: c.end } }] : []),
  ])
  const res = await upsertApp.request('/call/upsert_batch', jsonInit({ batch }, caller.basic))
  if (res.status !== 200) throw new Error(`upsert_batch failed: ${res.status} ${await res.text()}`)
}

/** The REQUEST authorizer's context for a caller, as API Gateway passes it to a function behind the authorizer. */
export function authorizerFor(caller: TestCaller): Record<string, string> {
  return principalToAuthorizerContext({
    userId: caller.userId,
    keyId: caller.keyId,
    entity: caller.entity,
    entities: [caller.entity],
  })
}
