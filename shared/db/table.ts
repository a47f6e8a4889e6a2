import type { CreateTableCommandInput, Projection } from '@aws-sdk/client-dynamodb'

/**
 * Loom's single DynamoDB table: the one definition CDK deploys and the local stack creates, so keys and indexes
 * never drift. Every entity lives here under prefixed keys (see docs/data-model.md); indexes are generic
 * (`GSI<n>PK`/`GSI<n>SK`) and each entity documents which it uses for which access pattern.
 */

/** Attribute names of the table's primary key. */
export const PRIMARY_KEY = { partitionKey: 'PK', sortKey: 'SK' } as const

/**
 * What an index copies from each item besides the table and index keys. Every write of an item that carries an
 * index's keys is also a write of this copy, so an index projects only what its bulk readers read; other readers
 * fetch the items back from the table by key (`shared/db/query.ts`). Reads follow this declaration, so they are
 * right on a table whose indexes still project `ALL` (a superset).
 */
export type IndexProjection =
  | { type: 'ALL' }
  | { type: 'KEYS_ONLY' }
  | { type: 'INCLUDE'; attributes: readonly string[] }

/** A global secondary index: generic string keys and its projection. */
export type IndexDefinition = {
  indexName: string
  partitionKey: string
  sortKey: string
  projection: IndexProjection
}

/**
 * A call part's attributes other than its large JSON columns (`attributes`, `inputs`, `otel_dump`, `output`): what
 * usage roll-ups, counts, deletes and trace sizes read of every call of a trace.
 */
export const CALL_SUMMARY_ATTRIBUTES = [
  'id',
  'project_id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'thread_id',
  'turn_id',
  'started_at',
  'ended_at',
  'exception',
  'summary',
  'wb_user_id',
  'wb_run_id',
  'wb_run_step',
  'wb_run_step_end',
  'input_refs',
  'output_refs',
  'deleted_at',
  'uncount_pending',
  'size',
] as const

/** What `feedback/stats` and `feedback/payload_schema` read of each row of a window (and filter on). */
export const FEEDBACK_WINDOW_ATTRIBUTES = ['created_at', 'payload', 'trigger_ref', 'feedback_type'] as const

/** What the tag and alias listings read of each label row. */
export const LABEL_ATTRIBUTES = ['object_id', 'digest', 'tag', 'alias'] as const

/** What the `latest` alias listing reads of each alias row. */
export const LATEST_ALIAS_ATTRIBUTES = ['object_id', 'digest'] as const

/**
 * The table's global secondary indexes, in creation order. Projections (docs/data-model.md, "Index projections"):
 * GSI1 holds whole items (both parts of every call of a trace, read by usage roll-ups and the trace view); feedback
 * windows read time and payload through GSI2 and GSI4; everything else is fetched back by key. DynamoDB allows at
 * most 20 non-key attributes in one index's INCLUDE list and 100 across the table.
 */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  // ALL: its readers (lean trace walks, trace sizes, feedback windows, tag and alias listings) read 29 non-key
  // attributes, over DynamoDB's limit of 20 per index for an INCLUDE projection (and trace reads want whole calls).
  { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', projection: { type: 'ALL' } },
  {
    indexName: 'GSI2',
    partitionKey: 'GSI2PK',
    sortKey: 'GSI2SK',
    projection: { type: 'INCLUDE', attributes: [...FEEDBACK_WINDOW_ATTRIBUTES, ...LATEST_ALIAS_ATTRIBUTES] },
  },
  { indexName: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK', projection: { type: 'KEYS_ONLY' } },
  {
    indexName: 'GSI4',
    partitionKey: 'GSI4PK',
    sortKey: 'GSI4SK',
    projection: { type: 'INCLUDE', attributes: FEEDBACK_WINDOW_ATTRIBUTES },
  },
  { indexName: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK', projection: { type: 'KEYS_ONLY' } },
]

/** Attribute that holds an epoch-seconds expiry where an item is disposable (TTL is never relied on for correctness). */
export const TTL_ATTRIBUTE = 'expiresAt'

function indexOf(indexName: string): IndexDefinition {
  const index = GLOBAL_INDEXES.find((i) => i.indexName === indexName)
  if (index === undefined) throw new Error(`Unknown index ${indexName}`)
  return index
}

/**
 * Whether a Query on `indexName` returns every one of `attributes` that an item holds: always under `ALL`; otherwise
 * only the table's keys, this index's keys and the included attributes.
 */
export function indexProjects(indexName: string, attributes: readonly string[]): boolean {
  const index = indexOf(indexName)
  if (index.projection.type === 'ALL') return true
  const projected = new Set<string>([
    PRIMARY_KEY.partitionKey,
    PRIMARY_KEY.sortKey,
    index.partitionKey,
    index.sortKey,
    ...(index.projection.type === 'INCLUDE' ? index.projection.attributes : []),
  ])
  return attributes.every((a) => projected.has(a))
}

/** The DynamoDB `Projection` of an index definition. */
export function projectionOf(index: IndexDefinition): Projection {
  if (index.projection.type === 'INCLUDE') {
    return { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection.attributes] }
  }
  return { ProjectionType: index.projection.type }
}

/** The `CreateTable` input for a table of this definition (on-demand billing). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const keyNames = [
    PRIMARY_KEY.partitionKey,
    PRIMARY_KEY.sortKey,
    ...GLOBAL_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey]),
  ]
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyNames.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PRIMARY_KEY.partitionKey, KeyType: 'HASH' },
      { AttributeName: PRIMARY_KEY.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
      IndexName: index.indexName,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: projectionOf(index),
    })),
  }
}
