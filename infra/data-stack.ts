import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib'
import { AttributeType, Billing, ProjectionType, TableV2 } from 'aws-cdk-lib/aws-dynamodb'
import type { Construct } from 'constructs'
import { GLOBAL_INDEXES, PRIMARY_KEY, TTL_ATTRIBUTE } from '../shared/db/table.js'

/** Props of the data stack. */
export type DataStackProps = StackProps & {
  /**
   * Production stages retain the table and turn on deletion protection.
   * @default false
   */
  production?: boolean
  /**
   * Keep `ALL` as every index's projection: for a table deployed before the indexes were narrowed
   * (`shared/db/table.ts`). CloudFormation cannot change an index's projection in place, so such a table keeps its
   * indexes as they are; reads follow the narrowed definition, which `ALL` contains (docs/architecture.md, AWS).
   * @default false
   */
  allProjectedIndexes?: boolean
}

/** The single DynamoDB table, from the same definition the local stack creates. */
export class DataStack extends Stack {
  readonly table: TableV2

  constructor(scope: Construct, id: string, props: DataStackProps = {}) {
    super(scope, id, props)
    const production = props.production ?? false
    const allProjected = props.allProjectedIndexes ?? false
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: PRIMARY_KEY.partitionKey, type: AttributeType.STRING },
      sortKey: { name: PRIMARY_KEY.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      globalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(allProjected || index.projection.type === 'ALL'
          ? { projectionType: ProjectionType.ALL }
          : index.projection.type === 'KEYS_ONLY'
            ? { projectionType: ProjectionType.KEYS_ONLY }
            : { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection.attributes] }),
      })),
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // RETAIN and deletion protection in production; dev stacks clean up after themselves.
      deletionProtection: production,
      removalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    })
    // The keys and models CLIs administer the deployed table by this name (LOOM_TABLE_NAME).
    new CfnOutput(this, 'TableName', {
      description: 'LOOM_TABLE_NAME for npm run keys / models',
      value: this.table.tableName,
    })
  }
}
