import { randomUUID } from 'node:crypto'
import { app as addApp } from '#functions/tracing/add-annotation-queue-items/handler'
import { app as createApp } from '#functions/tracing/create-annotation-queue/handler'
import { endPart, startPart, writeCalls } from './calls.js'
import { type ProjectCaller, send } from './tracing.js'

/** Creates a queue and returns its id. */
export async function newQueue(caller: ProjectCaller, name = 'queue'): Promise<string> {
  const res = await send(createApp, '/annotation_queues', { project_id: caller.project, name, scorer_refs: [] }, caller)
  if (res.status !== 200) throw new Error(`queue create failed: ${res.status}`)
  return res.body.id
}

/** Writes `n` finished calls and returns their ids. */
export async function newCalls(caller: ProjectCaller, n: number, op = 'weave:///e/p/op/my_op:abc'): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID())
  await writeCalls(
    caller,
    ids.map((id, i) => ({
      start: startPart(caller.project, { id, op_name: op, started_at: `2025-01-01T00:00:0${i % 10}Z` }),
      end: endPart(caller.project, id),
    })),
  )
  return ids
}

/** Adds calls to a queue and returns the response body. */
export async function addCalls(caller: ProjectCaller, queueId: string, callIds: string[]) {
  return (
    await send(
      addApp,
      `/annotation_queues/${queueId}/items`,
      { project_id: caller.project, call_ids: callIds, display_fields: ['input.prompt'] },
      caller,
    )
  ).body
}
