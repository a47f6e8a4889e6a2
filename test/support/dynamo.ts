import type { AddressInfo } from 'node:net'
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb'
import dynalite from 'dynalite'
import { inject } from 'vitest'
import { config } from '#shared/config'
import { rawDb } from '#shared/db/client'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The DynamoDB Local endpoint of the `test:dynamodb-local` lane (its globalSetup); absent in the default lane. */
    dynamodbLocalEndpoint: string
  }
}

/** A test file's DynamoDB endpoint and how to let it go. */
export type TestDynamo = { endpoint: string; close: () => Promise<void> }

/** Starts an in-memory dynalite server on a free loopback port. */
export async function startDynalite(): Promise<TestDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { endpoint: `http://127.0.0.1:${port}`, close }
}

/** The DynamoDB Local endpoint shared by the whole run in the `test:dynamodb-local` lane, else undefined. */
export function sharedDynamoDbLocal(): string | undefined {
  return inject('dynamodbLocalEndpoint')
}

/**
 * The test file's DynamoDB: the run's shared DynamoDB Local in the `test:dynamodb-local` lane (`close` then deletes
 * the file's table, `config.tableName`, so the shared process does not keep every file's data), else a dynalite of
 * its own (`close` stops it).
 */
export async function startTestDynamo(): Promise<TestDynamo> {
  const endpoint = sharedDynamoDbLocal()
  if (endpoint === undefined) return startDynalite()
  const close = async () => {
    if (config.tableName === undefined) return
    config.dynamoEndpoint = endpoint
    await rawDb()
      .send(new DeleteTableCommand({ TableName: config.tableName }))
      .catch(() => undefined)
  }
  return { endpoint, close }
}
