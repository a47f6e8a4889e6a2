import type { CallsFilter } from '#shared/schemas/call'
import { nonEmpty } from '#shared/tracing/call-source'
import type { LoadedCall } from '#shared/tracing/call-view'

// A filter's lists as sets, made once per query: a list may hold thousands of ids or names.
const setOf = (list: readonly string[] | null | undefined) => {
  const l = nonEmpty(list)
  return l === undefined ? undefined : new Set(l)
}

/** The filter as a test of a loaded call (its lists made into sets once). */
export function compileFilter(f: CallsFilter): (call: LoadedCall) => boolean {
  const [callIds, traceIds, parentIds, turnIds, userIds] = [
    f.call_ids,
    f.trace_ids,
    f.parent_ids,
    f.turn_ids,
    f.wb_user_ids,
  ].map(setOf)
  const threadIds = f.thread_ids ? new Set(f.thread_ids) : undefined
  const has = (set: Set<string> | undefined, v: string | null) => set === undefined || (v !== null && set.has(v))
  const ops = nonEmpty(f.op_names)
  const exactOps = ops && new Set(ops.filter((o) => !o.endsWith(':*')))
  const opPrefixes = ops?.filter((o) => o.endsWith(':*')).map((o) => o.slice(0, -1))
  const runs = nonEmpty(f.wb_run_ids)
  const inRefs = nonEmpty(f.input_refs)
  const outRefs = nonEmpty(f.output_refs)
  return (call) => {
    if (call.deleted_at !== null) return false
    if (!has(callIds, call.id) || !has(traceIds, call.trace_id) || !has(parentIds, call.parent_id)) return false
    if (!has(turnIds, call.turn_id) || !has(userIds, call.wb_user_id)) return false
    if (threadIds && !threadIds.has(call.thread_id ?? '\u0000')) return false
    if (f.trace_roots_only && call.parent_id !== null) return false
    if (exactOps && !exactOps.has(call.op_name) && !opPrefixes?.some((p) => call.op_name.startsWith(p))) return false
    if (runs) {
      const wanted = runs.map((r) => (r.includes('/') ? r : `${call.project_id}/${r}`))
      if (call.wb_run_id === null || !wanted.includes(call.wb_run_id)) return false
    }
    if (inRefs && !inRefs.some((r) => hasRef(call.input_refs, r))) return false
    if (outRefs && !outRefs.some((r) => hasRef(call.output_refs, r))) return false
    return true
  }
}

// A ref ending in `:*` matches every version of the object (any stored ref that starts with it minus the `*`), as
// `op_names` does; others match exactly.
function hasRef(refs: readonly string[], wanted: string): boolean {
  if (!wanted.endsWith(':*')) return refs.includes(wanted)
  const prefix = wanted.slice(0, -1)
  return refs.some((r) => r.startsWith(prefix))
}
