import { CALL_SUMMARY_ATTRIBUTES } from '#shared/db/table'

/**
 * The storage shape of calls, known only to the call data layer (`call-repository.ts` and its helpers): each call is
 * two items in its own partition, `PK = CALL#<project>#<id>`, `SK = S` (start part) and `SK = E` (end part). The start
 * part carries the index keys (see docs/data-model.md, "Tracing: calls"): GSI1 trace (both parts), GSI2 project
 * timeline, GSI3 op, GSI4 parent (roots under their own key), GSI5 thread.
 */

/** Index names of the call access patterns. */
export const CALL_INDEX = {
  trace: 'GSI1',
  timeline: 'GSI2',
  op: 'GSI3',
  parent: 'GSI4',
  thread: 'GSI5',
} as const

/** The partition key of a call's items. */
export const callPk = (project: string, id: string) => `CALL#${project}#${id}`

/**
 * Index partitions that every call of a project (or of a busy op) lands in are split into this many shards by call
 * id, so one project's ingest is not capped by a single index partition's write limit; reads merge the shards.
 */
export const INDEX_SHARDS = 8

/** The index shard of a call (FNV-1a of its id). */
export function callShard(id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % INDEX_SHARDS
}

/** The index partition keys of the call access patterns. */
export const callIndexPk = {
  trace: (project: string, traceId: string) => `CALLTRACE#${project}#${traceId}`,
  timeline: (project: string, shard: number) => `CALLS#${project}#${shard}`,
  op: (project: string, opBase: string, shard: number) => `CALLOP#${project}#${shard}#${opBase}`,
  root: (project: string, shard: number) => `CALLROOT#${project}#${shard}`,
  parent: (project: string, parentId: string) => `CALLPARENT#${project}#${parentId}`,
  thread: (project: string, threadId: string) => `CALLTHREAD#${project}#${threadId}`,
}

/**
 * The partitions of a project's deleted-call markers (`SK = <call id>`, one item per call `calls/delete` reached),
 * split by `callShard` like the timeline: one delete of a large trace writes a marker per call. Shorter than the
 * call's trace index key, so it fits wherever a call could be stored.
 */
export const deletedCallsPk = (project: string, shard: number) => `CALLDEL#${project}#${shard}`

/** Every shard's key of a sharded index partition. */
export function allShards(key: (shard: number) => string): string[] {
  return Array.from({ length: INDEX_SHARDS }, (_, shard) => key(shard))
}

/** An op name without its version (`weave:///e/p/op/name:digest` → `weave:///e/p/op/name`), the op index key. */
export function opBase(opName: string): string {
  const colon = opName.lastIndexOf(':')
  return colon <= 'weave:'.length - 1 ? opName : opName.slice(0, colon)
}

/**
 * Attributes a lean read fetches: everything but the large JSON columns `attributes`, `inputs`, `otel_dump` and
 * `output` (usage roll-ups and counts never look at them), so DynamoDB returns and the client parses far less.
 */
export const LEAN_ATTRIBUTES = ['PK', 'SK', ...CALL_SUMMARY_ATTRIBUTES] as const

/** `LEAN_ATTRIBUTES` as a projection expression with its attribute names. */
export const LEAN_PROJECTION = {
  ProjectionExpression: LEAN_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
  names: Object.fromEntries(LEAN_ATTRIBUTES.map((a, i) => [`#a${i}`, a])),
}
