import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { MAX_ITEM_BYTES, MAX_KEY_BYTES } from '#shared/db/item-size'
import { GLOBAL_INDEXES, PRIMARY_KEY } from '#shared/db/table'
import { ItemTooLargeError, KeyTooLongError, UnstorableValueError } from '#shared/errors/storage-limit-errors'

/**
 * DynamoDB's documented per-request limits, checked on every request the client sends, before it is sent: key
 * values (2,048 bytes partition, 1,024 sort, never empty, GSI keys included), item size (400 KB), numbers (38 digits,
 * 1E-130 to 1E+126), expression strings (4 KB) and their substitutions (2 MB in all). dynalite and DynamoDB Local
 * enforce only some of these, and count characters where DynamoDB counts UTF-8 bytes; checking them here makes every
 * engine refuse what AWS refuses, with a typed 4xx instead of the service's ValidationException (a 500).
 * Repositories that write several items check them all first (`assertItemsFit` in `shared/db/item-size.ts`), so a
 * refusal here, the last line, can only ever stop a request's first write.
 */

type Av = AttributeValue
type Input = Record<string, unknown>

const PARTITION = new Set<string>([PRIMARY_KEY.partitionKey, ...GLOBAL_INDEXES.map((i) => i.partitionKey)])
const SORT = new Set<string>([PRIMARY_KEY.sortKey, ...GLOBAL_INDEXES.map((i) => i.sortKey)])
const MAX_EXPRESSION_BYTES = 4 * 1024
const MAX_SUBSTITUTION_BYTES = 2 * 1024 * 1024
const EXPRESSIONS = ['KeyConditionExpression', 'FilterExpression', 'ConditionExpression', 'UpdateExpression']
const bytes = (s: string) => Buffer.byteLength(s, 'utf8')

// A number's significant digits: DynamoDB trims leading and trailing zeros, keeps at most 38, and stores one byte
// per two of them plus one.
const significant = (text: string) =>
  text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '')

// DynamoDB's number range and precision (Naming rules and data types, Number).
function checkNumber(text: string): number {
  const n = Number(text)
  const digits = significant(text).length
  if (!Number.isFinite(n) || digits > 38 || Math.abs(n) >= 1e126 || (n !== 0 && Math.abs(n) < 1e-130)) {
    throw new UnstorableValueError(`The number ${text.slice(0, 40)} is outside the range DynamoDB can store`)
  }
  return Math.ceil(digits / 2) + 1
}

/** The size DynamoDB counts for one attribute value (UTF-8 strings, numbers by significant digits, 3 + 1/element). */
export function avBytes(v: Av): number {
  if (v.S !== undefined) return bytes(v.S)
  if (v.N !== undefined) return checkNumber(v.N)
  if (v.B !== undefined) return v.B.byteLength
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1
  if (v.SS !== undefined) return v.SS.reduce((n, s) => n + bytes(s), 0)
  if (v.NS !== undefined) return v.NS.reduce((n, s) => n + avBytes({ N: s }), 0)
  if (v.BS !== undefined) return v.BS.reduce((n, b) => n + b.byteLength, 0)
  if (v.L !== undefined) return v.L.reduce((n, e) => n + 1 + avBytes(e), 3)
  if (v.M !== undefined) return Object.entries(v.M).reduce((n, [k, e]) => n + bytes(k) + 1 + avBytes(e), 3)
  return 0
}

function checkKeyValue(name: string, value: Av | undefined): void {
  const limit = PARTITION.has(name) ? MAX_KEY_BYTES.partition : SORT.has(name) ? MAX_KEY_BYTES.sort : undefined
  if (limit === undefined || value?.S === undefined) return
  if (value.S === '') throw new UnstorableValueError('A value in the request is empty where it must be stored as a key')
  const size = bytes(value.S)
  if (size > limit) {
    throw new KeyTooLongError(`A value in the request is too long to store as a key (${size} bytes, at most ${limit})`)
  }
}

function checkItem(item: Record<string, Av> | undefined): void {
  if (item === undefined) return
  let size = 0
  for (const [name, value] of Object.entries(item)) {
    checkKeyValue(name, value)
    size += bytes(name) + avBytes(value)
  }
  if (size > MAX_ITEM_BYTES) {
    throw new ItemTooLargeError(`A stored item would be ${size} bytes, over DynamoDB's limit of ${MAX_ITEM_BYTES}`)
  }
}

// The attribute each `<name> = :value` (or `<name> <op> :value`, `begins_with(<name>, :value)`) compares or assigns.
const PAIR = /([#\w]+)\s*(?:=|<=|>=|<|>|BETWEEN)\s*(:\w+)|begins_with\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)/gi

function checkExpressions(input: Input): void {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, Av>
  let substitutions = 0
  for (const [k, v] of Object.entries(names)) substitutions += bytes(k) + bytes(v)
  for (const [k, v] of Object.entries(values)) substitutions += bytes(k) + avBytes(v)
  if (substitutions > MAX_SUBSTITUTION_BYTES) {
    throw new ItemTooLargeError(`The request's values are ${substitutions} bytes, over DynamoDB's 2 MB per request`)
  }
  for (const field of [...EXPRESSIONS, 'ProjectionExpression']) {
    const text = input[field]
    if (typeof text !== 'string') continue
    // Expressions are built by Loom's code, never from request text: a long one is a bug, not the caller's fault.
    if (bytes(text) > MAX_EXPRESSION_BYTES) throw new Error(`${field} is over DynamoDB's 4 KB expression limit`)
    if (field === 'ProjectionExpression' || field === 'FilterExpression' || field === 'ConditionExpression') continue
    for (const m of text.matchAll(PAIR)) {
      const [attr, placeholder] = m[1] === undefined ? [m[3], m[4]] : [m[1], m[2]]
      if (attr === undefined || placeholder === undefined) continue
      checkKeyValue(attr.startsWith('#') ? (names[attr] ?? attr) : attr, values[placeholder])
    }
  }
  const total = Object.values(values).reduce((n, v) => n + avBytes(v), 0)
  if (input.UpdateExpression !== undefined && total > MAX_ITEM_BYTES) {
    throw new ItemTooLargeError(`An update would write ${total} bytes, over DynamoDB's item limit of ${MAX_ITEM_BYTES}`)
  }
}

function checkKey(key: Record<string, Av> | undefined): void {
  for (const [name, value] of Object.entries(key ?? {})) checkKeyValue(name, value)
}

/** Throws the typed 4xx for a marshalled request that DynamoDB's documented limits would refuse. */
export function checkRequestLimits(input: Input): void {
  checkItem(input.Item as Record<string, Av> | undefined)
  checkKey(input.Key as Record<string, Av> | undefined)
  checkExpressions(input)
  const writes = (input.RequestItems ?? {}) as Record<string, unknown>
  for (const requests of Object.values(writes)) {
    if (Array.isArray(requests)) {
      for (const r of requests as {
        PutRequest?: { Item: Record<string, Av> }
        DeleteRequest?: { Key: Record<string, Av> }
      }[]) {
        checkItem(r.PutRequest?.Item)
        checkKey(r.DeleteRequest?.Key)
      }
    } else {
      for (const key of (requests as { Keys?: Record<string, Av>[] }).Keys ?? []) checkKey(key)
    }
  }
}

/** Installs the limits check on a client: in its build step, after the document client marshalled the input. */
export function addRequestLimits(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next) => (args) => {
      checkRequestLimits(args.input as Input)
      return next(args)
    },
    { step: 'build', priority: 'high', name: 'loomRequestLimits', override: true },
  )
}
