/**
 * What storing items costs in DynamoDB, base table plus index copies, under the table's index projections
 * (`shared/db/table.ts`) and under `ALL` (what every index projected before): the benches print it next to their
 * timings. An index copy is the table's keys, the index's keys and the projected attributes, plus 100 bytes of
 * overhead; a write is billed 1 WCU per started KB of the base item and of each index copy (an index counts only
 * where the item carries its keys). Sizes from `itemBytes` (numbers counted at their 21-byte maximum).
 */
import { itemBytes } from '#shared/db/item-size'
import { GLOBAL_INDEXES, type IndexDefinition, PRIMARY_KEY } from '#shared/db/table'

type Item = Record<string, unknown>

const INDEX_OVERHEAD = 100
const wcu = (bytes: number) => Math.ceil(bytes / 1024)

function indexCopy(item: Item, index: IndexDefinition, all: boolean): Item {
  if (all || index.projection.type === 'ALL') return item
  const names = [PRIMARY_KEY.partitionKey, PRIMARY_KEY.sortKey, index.partitionKey, index.sortKey]
  if (index.projection.type === 'INCLUDE') names.push(...index.projection.attributes)
  return Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]))
}

/** Bytes stored and WCU of writing these items once, with every index projecting `ALL` and with the table's projections. */
export type WriteCost = { bytes: number; wcu: number; indexCopies: number }

/** The cost of writing `items` (one call's parts, one feedback row…), `all` = every index projecting `ALL`. */
export function writeCost(items: readonly Item[], all: boolean): WriteCost {
  let bytes = 0
  let units = 0
  let copies = 0
  for (const item of items) {
    const base = itemBytes(item)
    bytes += base + INDEX_OVERHEAD
    units += wcu(base)
    for (const index of GLOBAL_INDEXES) {
      if (item[index.partitionKey] === undefined || item[index.sortKey] === undefined) continue
      const copy = itemBytes(indexCopy(item, index, all)) + INDEX_OVERHEAD
      bytes += copy
      units += wcu(copy)
      copies++
    }
  }
  return { bytes, wcu: units, indexCopies: copies }
}

/** One line comparing `ALL` with the table's projections for `items`. */
export function writeCostLine(what: string, items: readonly Item[]): string {
  const before = writeCost(items, true)
  const after = writeCost(items, false)
  const saved = (a: number, b: number) => `${Math.round((100 * (a - b)) / a)}%`
  return (
    `${what}: ${items.length} item(s) + ${after.indexCopies} index copies; stored ${before.bytes.toLocaleString('en-US')} B ` +
    `with ALL → ${after.bytes.toLocaleString('en-US')} B now (−${saved(before.bytes, after.bytes)}); ` +
    `${before.wcu} WCU → ${after.wcu} WCU (−${saved(before.wcu, after.wcu)})`
  )
}
