import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb'

/**
 * Loom's single DynamoDB table: the one definition CDK deploys and the local stack creates, so keys and indexes
 * never drift. Every entity lives here under prefixed keys (see docs/data-model.md); indexes are generic
 * (`GSI<n>PK`/`GSI<n>SK`) and each entity documents which it uses for which access pattern.
 */

/** Attribute names of the table's primary key. */
export const PRIMARY_KEY = { partitionKey: 'PK', sortKey: 'SK' } as const

/** A global secondary index: generic string keys, all attributes projected. */
export type IndexDefinition = {
  indexName: string
  partitionKey: string
  sortKey: string
}

/** The table's global secondary indexes, in creation order. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
  { indexName: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
  { indexName: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
  { indexName: 'GSI4', partitionKey: 'GSI4PK', sortKey: 'GSI4SK' },
  { indexName: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK' },
]

/** Attribute that holds an epoch-seconds expiry where an item is disposable (TTL is never relied on for correctness). */
export const TTL_ATTRIBUTE = 'expiresAt'

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
      Projection: { ProjectionType: 'ALL' },
    })),
  }
}
