import { callIndexPk, callPk, callShard, opBase } from '#shared/db/call-keys'
import { itemBytes, MAX_ITEM_BYTES, oversizedKey } from '#shared/db/item-size'
import { BadRequestError, PayloadTooLargeError } from '#shared/errors/http-error'
import type { CallEndItem, CallStartItem } from '#shared/schemas/call-item'

/**
 * The stored items of call parts (a start and an end, with their index keys) and the DynamoDB limits they must fit
 * before a write. Pure: no I/O. The repository (`call-repository.ts`) writes them; benches seed with them.
 */

/** The full stored item of a start part, with its index keys. */
export function startRecord(item: CallStartItem): Record<string, unknown> {
  const p = item.project_id
  const sk = `${item.started_at}#${item.id}`
  const shard = callShard(item.id)
  return {
    PK: callPk(p, item.id),
    SK: 'S',
    GSI1PK: callIndexPk.trace(p, item.trace_id),
    GSI1SK: `${item.id}#S`,
    GSI2PK: callIndexPk.timeline(p, shard),
    GSI2SK: sk,
    GSI3PK: callIndexPk.op(p, opBase(item.op_name), shard),
    GSI3SK: sk,
    GSI4PK: item.parent_id === undefined ? callIndexPk.root(p, shard) : callIndexPk.parent(p, item.parent_id),
    GSI4SK: sk,
    ...(item.thread_id === undefined ? {} : { GSI5PK: callIndexPk.thread(p, item.thread_id), GSI5SK: sk }),
    ...item,
  }
}

/** The full stored item of an end part; it joins the trace index when its trace id is known. */
export function endRecord(item: CallEndItem): Record<string, unknown> {
  return {
    PK: callPk(item.project_id, item.id),
    SK: 'E',
    ...(item.trace_id === undefined
      ? {}
      : { GSI1PK: callIndexPk.trace(item.project_id, item.trace_id), GSI1SK: `${item.id}#E` }),
    ...item,
  }
}

// Room kept for what later writes add to a stored part: the counter and deletion marks, and an end's trace keys and
// id when its trace id comes from its start (at most 2,048 + 1,024 + 2,048 bytes and the names).
const RESERVED_BYTES = 6 * 1024

// The request fields a call item's key values are made of, to name them when one is too long for its key.
const KEY_FIELDS: Record<string, string> = {
  PK: 'project_id or id',
  SK: 'id',
  GSI1PK: 'project_id or trace_id',
  GSI1SK: 'id',
  GSI2PK: 'project_id',
  GSI2SK: 'id',
  GSI3PK: 'project_id or op_name',
  GSI3SK: 'id',
  GSI4PK: 'project_id or parent_id',
  GSI4SK: 'id',
  GSI5PK: 'project_id or thread_id',
  GSI5SK: 'id',
}

function assertFits(record: Record<string, unknown>, part: string): void {
  const key = oversizedKey(record)
  if (key !== undefined) {
    throw new BadRequestError(`Call ${part}: ${KEY_FIELDS[key] ?? key} is too long to be stored as a key`)
  }
  const size = itemBytes(record) + RESERVED_BYTES
  if (size > MAX_ITEM_BYTES) {
    throw new PayloadTooLargeError(
      `Call ${part} is too large to store (${size} bytes with its keys, of ${MAX_ITEM_BYTES})`,
    )
  }
}

/**
 * Throws the 4xx a start part answers when its item would break a DynamoDB limit: 400 naming the request fields of a
 * key value too long for its key, 413 for an item over 400 KB with room kept for the marks later writes add.
 */
export function assertCallStartFits(start: CallStartItem): void {
  assertFits(startRecord(start), 'start')
}

/** `assertCallStartFits` for an end part. */
export function assertCallEndFits(end: CallEndItem): void {
  assertFits(endRecord(end), 'end')
}
