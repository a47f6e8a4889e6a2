import type { TestProject } from 'vitest/node'
import { startDynamoDbLocal } from '../../scripts/local/dynamodb-local.js'

// The `test:dynamodb-local` lane: one in-memory DynamoDB Local for the whole run; each test file creates its own
// table in it (test/setup.ts through startTestDynamo).
let stop: (() => Promise<void>) | undefined

/** Starts DynamoDB Local and hands its endpoint to every test file (`inject('dynamodbLocalEndpoint')`). */
export async function setup(project: TestProject): Promise<void> {
  const dynamo = await startDynamoDbLocal()
  stop = dynamo.close
  project.provide('dynamodbLocalEndpoint', dynamo.endpoint)
}

/** Stops the JVM once every file has run. */
export async function teardown(): Promise<void> {
  await stop?.()
}
