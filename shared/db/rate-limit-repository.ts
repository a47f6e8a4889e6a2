import { randomInt } from 'node:crypto'
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { db, table } from '#shared/db/client'
import { ifConditionHolds } from '#shared/db/conditional-write'

// Keys: window counters PK=RATE#<scope> SK=W#<yyyy-mm-ddThh:mm> (requests, tokens); concurrency slots
// PK=SLOT#<scope> SK=S#<n> (holder, leaseUntil). `expiresAt` lets TTL tidy up; nothing relies on it.

/** The length of a rate window in ms: fixed windows aligned to the minute. */
export const WINDOW_MS = 60_000

/** A rate window: its id (the UTC minute) and when it ends (epoch ms). */
export type RateWindow = { id: string; endsAt: number }

/** The window a moment falls in. */
export function windowOf(now: number): RateWindow {
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS
  return { id: new Date(start).toISOString().slice(0, 16), endsAt: start + WINDOW_MS }
}

/** What a window counter holds. */
export type WindowCounts = { requests: number; tokens: number }

const windowKey = (scope: string, window: RateWindow) => ({ PK: `RATE#${scope}`, SK: `W#${window.id}` })
const slotKey = (scope: string, slot: number) => ({ PK: `SLOT#${scope}`, SK: `S#${String(slot).padStart(5, '0')}` })
// Counters are kept a day after their window for inspection; TTL may delete them after that.
const windowExpiry = (window: RateWindow) => Math.ceil(window.endsAt / 1000) + 86_400

/** Reads a window's counts (zero when nothing was counted yet). */
export async function readWindow(scope: string, window: RateWindow): Promise<WindowCounts> {
  const { Item } = await db().send(
    new GetCommand({ TableName: table(), Key: windowKey(scope, window), ConsistentRead: true }),
  )
  return { requests: Number(Item?.requests ?? 0), tokens: Number(Item?.tokens ?? 0) }
}

/**
 * Counts one request in a window unless the window already holds `rpm` requests or `tpm` tokens: one conditional
 * `ADD`, so concurrent instances can never admit more than the limit. Returns the counts that refused it, or undefined
 * when it was counted.
 */
export async function countRequest(
  scope: string,
  window: RateWindow,
  limits: { rpm?: number | undefined; tpm?: number | undefined },
): Promise<WindowCounts | undefined> {
  const conditions: string[] = []
  const values: Record<string, unknown> = { ':one': 1, ':exp': windowExpiry(window) }
  if (limits.rpm !== undefined) {
    conditions.push('(attribute_not_exists(requests) OR requests < :rpm)')
    values[':rpm'] = limits.rpm
  }
  if (limits.tpm !== undefined) {
    conditions.push('(attribute_not_exists(tokens) OR tokens < :tpm)')
    values[':tpm'] = limits.tpm
  }
  const counted = await ifConditionHolds(
    db().send(
      new UpdateCommand({
        TableName: table(),
        Key: windowKey(scope, window),
        UpdateExpression: 'ADD requests :one SET expiresAt = :exp',
        ...(conditions.length === 0 ? {} : { ConditionExpression: conditions.join(' AND ') }),
        ExpressionAttributeValues: values,
      }),
    ),
  )
  return counted === undefined ? readWindow(scope, window) : undefined
}

/** Adds the tokens a finished completion consumed to a window (an `ADD`, so concurrent charges never overwrite). */
export async function addTokens(scope: string, window: RateWindow, tokens: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: windowKey(scope, window),
      UpdateExpression: 'ADD tokens :n SET expiresAt = :exp',
      ExpressionAttributeValues: { ':n': tokens, ':exp': windowExpiry(window) },
    }),
  )
}

/** A claimed concurrency slot. */
export type Slot = { scope: string; slot: number; holder: string }

async function claim(scope: string, slot: number, holder: string, now: number, leaseMs: number): Promise<boolean> {
  const claimed = await ifConditionHolds(
    db().send(
      new PutCommand({
        TableName: table(),
        Item: {
          ...slotKey(scope, slot),
          holder,
          leaseUntil: now + leaseMs,
          expiresAt: Math.ceil((now + leaseMs) / 1000) + 3_600,
        },
        // Free when absent, or when its holder's lease ran out (a crashed or frozen instance never released it).
        ConditionExpression: 'attribute_not_exists(PK) OR leaseUntil < :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    ),
  )
  return claimed !== undefined
}

async function freeSlots(scope: string, limit: number, now: number): Promise<number[]> {
  // At most `limit` items (plus any left above a lowered limit): one small page.
  const { Items = [] } = await db().send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `SLOT#${scope}` },
      ConsistentRead: true,
    }),
  )
  const held = new Set(
    Items.filter((item) => Number(item.leaseUntil) >= now).map((item) => Number(String(item.SK).slice(2))),
  )
  const free = Array.from({ length: limit }, (_, n) => n).filter((n) => !held.has(n))
  for (let i = free.length - 1; i > 0; i--) {
    const j = randomInt(i + 1)
    ;[free[i], free[j]] = [free[j] as number, free[i] as number]
  }
  return free
}

// Each lost claim means another request took that slot; a few rounds settle any realistic race.
const MAX_ROUNDS = 4

/**
 * Claims one of `limit` slots of a scope with a conditional put: first a random slot (one write when the scope is
 * not busy), then the slots a consistent Query shows free. Undefined when every slot is held by a live lease.
 */
export async function claimSlot(
  scope: string,
  limit: number,
  holder: string,
  now: number,
  leaseMs: number,
): Promise<Slot | undefined> {
  const first = randomInt(limit)
  if (await claim(scope, first, holder, now, leaseMs)) return { scope, slot: first, holder }
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const free = await freeSlots(scope, limit, now)
    if (free.length === 0) return undefined
    for (const slot of free) {
      if (await claim(scope, slot, holder, now, leaseMs)) return { scope, slot, holder }
    }
  }
  return undefined
}

/** Frees a slot, unless its lease expired and another request has claimed it since (then it is theirs). */
export async function releaseSlot(slot: Slot): Promise<void> {
  await ifConditionHolds(
    db().send(
      new DeleteCommand({
        TableName: table(),
        Key: slotKey(slot.scope, slot.slot),
        ConditionExpression: 'holder = :holder',
        ExpressionAttributeValues: { ':holder': slot.holder },
      }),
    ),
  )
}
