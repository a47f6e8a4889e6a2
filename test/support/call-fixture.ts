import { randomUUID } from 'node:crypto'
import { app as deleteApp } from '#functions/tracing/delete-calls/handler'
import { jsonInit, newCaller, type TestCaller } from './auth.js'
import { endPart, newProject, startPart, writeCalls } from './calls.js'

/** Four calls with known values (see each comment); `d` is deleted after writing. */
export type CallFixture = { caller: TestCaller; project: string; a: string; b: string; c: string; d: string }

/**
 * a: root alpha:v1 at :01, x=5, latency 200 ms, success; b: child of a, alpha:v2 at :02, x="12", exception (error),
 * latency 1000 ms; c: root plain_op at :03, x=2.5, running, thread th1, turn tu1, run run1, input ref;
 * d: root beta:v1 at :04, output ref, descendant_error — deleted.
 */
export async function callFixture(): Promise<CallFixture> {
  const caller = await newCaller()
  const project = newProject(caller)
  const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  await writeCalls(caller, [
    {
      start: startPart(project, {
        id: a,
        trace_id: 'ta',
        op_name: 'weave:///e/p/op/alpha:v1',
        started_at: '2025-01-01T00:00:01Z',
        inputs: { x: 5, name: 'Hello World', tags: [1, 2] },
      }),
      end: endPart(project, a, { ended_at: '2025-01-01T00:00:01.200Z', output: 'fine' }),
    },
    {
      start: startPart(project, {
        id: b,
        trace_id: 'ta',
        parent_id: a,
        op_name: 'weave:///e/p/op/alpha:v2',
        started_at: '2025-01-01T00:00:02Z',
        inputs: { x: '12', name: 'hello-there' },
      }),
      end: endPart(project, b, { ended_at: '2025-01-01T00:00:03Z', exception: 'bad' }),
    },
    {
      start: startPart(project, {
        id: c,
        trace_id: 'tc',
        op_name: 'plain_op',
        started_at: '2025-01-01T00:00:03Z',
        thread_id: 'th1',
        turn_id: 'tu1',
        wb_run_id: `${project}/run1`,
        inputs: { x: 2.5, ref: 'weave:///e/p/object/ds:abc' },
      }),
    },
    {
      start: startPart(project, {
        id: d,
        trace_id: 'td',
        op_name: 'weave:///e/p/op/beta:v1',
        started_at: '2025-01-01T00:00:04Z',
      }),
      end: endPart(project, d, {
        ended_at: '2025-01-01T00:00:05Z',
        output: { o: 'weave:///e/p/object/m:1' },
        summary: { status_counts: { error: 1 } },
      }),
    },
  ])
  const res = await deleteApp.request('/calls/delete', jsonInit({ project_id: project, call_ids: [d] }, caller.basic))
  if (res.status !== 200) throw new Error(`delete failed: ${res.status}`)
  return { caller, project, a, b, c, d }
}
