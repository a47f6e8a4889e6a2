import { createHash } from 'node:crypto'
import * as z from 'zod/mini'
import { assertProjectAccess } from '#shared/auth/authenticate'
import { ITEM_REQUESTS_IN_FLIGHT, mapInParallel } from '#shared/db/batch-write'
import { assertCallStartFits } from '#shared/db/call-records'
import { getCallParts, pendingDisplayNames, setCallDisplayName, storedTraceIds } from '#shared/db/call-repository'
import { registerProjects } from '#shared/db/project-repository'
import { claimRetryValue } from '#shared/db/retry-key-repository'
import { PayloadTooLargeError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { EndedCall, StartedCall } from '#shared/schemas/call'
import type { CallParts } from '#shared/schemas/call-item'
import {
  assertEndFits,
  assertStartFits,
  buildEnd,
  buildStart,
  type EndJson,
  endJson,
  type StartJson,
  startJson,
  storedTime,
} from '#shared/tracing/call-build'
import { storeCountingStarts } from '#shared/tracing/call-count'
import { uuidv7 } from '#shared/tracing/ids'

/** One write of `call/upsert_batch`: a start part or an end part. */
export type IngestItem = { mode: 'start'; start: StartedCall } | { mode: 'end'; end: EndedCall }

/** The answer for one ingested item: `{id, trace_id}` for a start, `{}` for an end. */
export type IngestResult = { id: string; trace_id: string } | Record<string, never>

const opt = (v: string | null | undefined) => (v === null || v === undefined ? undefined : v)

const GeneratedIdsSchema = z.array(z.nullable(z.tuple([z.string(), z.string()])))

type GeneratedIds = ([string, string] | null)[]

/** Fresh ids (UUIDv7) for starts sent without `id` or `trace_id`, one `[id, trace_id]` per item (null for others). */
function freshIds(items: readonly IngestItem[]): GeneratedIds {
  return items.map((item): [string, string] | null =>
    item.mode === 'start' && (!item.start.id || !item.start.trace_id) ? [uuidv7(), uuidv7()] : null,
  )
}

/**
 * The ids for starts sent without `id` or `trace_id`. With the client's retry id (`X-Weave-Retry-Id`) the first
 * attempt's ids are recorded and reused by its retries, so a retried start without a client id does not create a
 * second call; without it such a retry does.
 */
async function generatedIds(
  principal: Principal,
  items: readonly IngestItem[],
  ids: GeneratedIds,
  retryKey: string | undefined,
) {
  if (retryKey === undefined || ids.every((g) => g === null)) return ids
  // What the ids are for: the position, project, op and start time of each start that needs them.
  const request = createHash('sha256')
    .update(
      JSON.stringify(
        items.map((item, i) =>
          ids[i] === null || item.mode !== 'start'
            ? null
            : [item.start.project_id, item.start.op_name, item.start.started_at, item.start.parent_id ?? null],
        ),
      ),
    )
    .digest('base64url')
  const first = await claimRetryValue('call', principal.userId, retryKey, ids, GeneratedIdsSchema, request)
  // A record from before fingerprints, made for a request of another shape, is not this request's.
  const fits = first.length === ids.length && first.every((g, i) => (g === null) === (ids[i] === null))
  return fits ? first : ids
}

type KeyedStart = StartedCall & { id: string; trace_id: string; json: StartJson }
type JsonEnd = EndedCall & { json: EndJson }

const keyed = (item: IngestItem & { mode: 'start' }, ids: [string, string] | null | undefined) => ({
  ...item.start,
  id: item.start.id || (ids?.[0] as string),
  trace_id: item.start.trace_id || (ids?.[1] as string),
})

/**
 * Stores start and end parts in order (later parts for the same call win), two item writes per call through
 * `BatchWriteItem`. A start whose call already has a stored start is a retry and is left as stored (so a retried
 * start never resets a later display-name update or deletion) and is not counted again; its answer is the stored
 * `{id, trace_id}`, so a retry without a `trace_id` gets the one its first attempt stored. Every part is checked
 * against DynamoDB's limits before anything is written: a part too large is a 413, a value too long for its key a 400.
 */
export async function ingestCalls(
  principal: Principal,
  items: readonly IngestItem[],
  retryKey?: string,
): Promise<IngestResult[]> {
  for (const item of items) {
    assertProjectAccess(principal, item.mode === 'start' ? item.start.project_id : item.end.project_id)
    if (item.mode === 'start') storedTime(item.start.started_at, 'started_at')
    else storedTime(item.end.ended_at, 'ended_at')
  }
  const fresh = freshIds(items)
  const json = items.map((item, i) => {
    if (item.mode === 'end') {
      const j = endJson(item.end)
      assertEndFits(item.end, j)
      return j
    }
    const j = startJson(item.start)
    assertStartFits(keyed(item, fresh[i]), j, principal.userId)
    return j
  })
  const generated = await generatedIds(principal, items, fresh, retryKey)
  const starts = new Map<string, KeyedStart>()
  const ends = new Map<string, JsonEnd>()
  const startKeys = items.map((item, i) => {
    if (item.mode === 'end') {
      ends.set(`${item.end.project_id}\n${item.end.id}`, { ...item.end, json: json[i] as EndJson })
      return undefined
    }
    const start = keyed(item, generated[i])
    const key = `${item.start.project_id}\n${start.id}`
    starts.set(key, { ...start, json: json[i] as StartJson })
    return key
  })
  const projects = new Set([...starts.values(), ...ends.values()].map((c) => c.project_id))
  const traceIds = new Map<string, string>()
  await registerProjects(projects)
  await Promise.all(
    [...projects].map(async (p) => {
      for (const [id, traceId] of await ingestProject(principal.userId, p, starts, ends)) {
        traceIds.set(`${p}\n${id}`, traceId)
      }
    }),
  )
  return startKeys.map((key) => {
    const start = key === undefined ? undefined : starts.get(key)
    if (key === undefined || start === undefined) return {}
    return { id: start.id, trace_id: traceIds.get(key) ?? start.trace_id }
  })
}

/**
 * A new start's item, with the display name a `call/update` left before it arrived (the later write wins, as the
 * user renamed the call after making it; '' clears). A name that would take the start past DynamoDB's item size is
 * left out rather than failing the batch.
 */
async function buildRenamedStart(s: KeyedStart, stored: CallParts | undefined, userId: string) {
  const pending = stored?.pendingDisplayName
  const item = await buildStart(s, s.json, userId)
  if (pending === undefined) return item
  const renamed = { ...item, display_name: pending === '' ? undefined : pending }
  try {
    assertCallStartFits(renamed)
  } catch (error) {
    if (error instanceof PayloadTooLargeError) return item
    throw error
  }
  return renamed
}

/** Writes one project's parts; returns the trace id each start of the batch has in the store. */
async function ingestProject(
  userId: string,
  project: string,
  allStarts: Map<string, KeyedStart>,
  allEnds: Map<string, JsonEnd>,
): Promise<Map<string, string>> {
  const starts = [...allStarts.values()].filter((s) => s.project_id === project)
  const ends = [...allEnds.values()].filter((e) => e.project_id === project)
  const startById = new Map(starts.map((s) => [s.id, s]))
  const lookup = [...startById.keys(), ...ends.filter((e) => !e.trace_id && !startById.has(e.id)).map((e) => e.id)]
  // With the display names `call/update` left for calls not started yet, in the same read.
  const stored: Map<string, CallParts> =
    lookup.length > 0 ? await getCallParts(project, lookup, { parts: 'start', pendingNames: true }) : new Map()
  const fresh = starts.filter((s) => stored.get(s.id)?.start === undefined)
  const traceIds = new Map(starts.map((s) => [s.id, stored.get(s.id)?.start?.trace_id ?? s.trace_id]))
  await storeCountingStarts(project, {
    fresh: fresh.map((s) => ({ id: s.id, build: () => buildRenamedStart(s, stored.get(s.id), userId) })),
    ends: async (raced) => {
      // A start stored before this request (a retry) keeps its trace id; so does one another writer stored meanwhile.
      if (raced.length > 0) for (const [id, t] of await storedTraceIds(project, raced)) traceIds.set(id, t)
      // Building an end stores its large columns: a bounded number at once.
      return mapInParallel(ends, ITEM_REQUESTS_IN_FLIGHT, (e) => {
        const traceId = opt(e.trace_id) ?? traceIds.get(e.id) ?? stored.get(e.id)?.start?.trace_id
        return buildEnd(e, e.json, traceId)
      })
    },
  })
  if (fresh.length > 0) await applyLateRenames(project, fresh, stored)
  return traceIds
}

/**
 * Renames that arrived while this request stored its new starts (after its read of the pending names, before its
 * write, so the start was missing for the rename and the name missing for this request) are applied now: one strong
 * read of the new starts' pending-name keys, and an update for each name that differs from what the start took.
 */
async function applyLateRenames(project: string, fresh: readonly KeyedStart[], stored: Map<string, CallParts>) {
  const late = await pendingDisplayNames(
    project,
    fresh.map((s) => s.id),
  )
  const renames = [...late].filter(([id, name]) => name !== stored.get(id)?.pendingDisplayName)
  await mapInParallel(renames, ITEM_REQUESTS_IN_FLIGHT, ([id, name]) =>
    setCallDisplayName(project, id, name === '' ? undefined : name),
  )
}
