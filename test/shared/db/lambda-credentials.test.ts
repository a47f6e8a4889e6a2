import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { config } from '#shared/config'
import { defaultProvider } from '#shared/db/lambda-credentials'

// The module the Lambda bundle puts in place of @aws-sdk/credential-provider-node (infra/bundling.ts).
beforeEach(() => {
  vi.unstubAllEnvs()
})

afterEach(() => {
  vi.unstubAllEnvs()
})

function clientWithEnvironmentCredentials(): DynamoDBClient {
  return new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamoEndpoint ?? '',
    credentialDefaultProvider: defaultProvider,
  })
}

describe('environment credential provider', () => {
  it("resolves the execution role's keys and session token from the environment", async () => {
    // Prepare
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDLAMBDA')
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret')
    vi.stubEnv('AWS_SESSION_TOKEN', 'token')

    // Act
    const credentials = await defaultProvider()()

    // Assess
    expect(credentials).toEqual({ accessKeyId: 'AKIDLAMBDA', secretAccessKey: 'secret', sessionToken: 'token' })
  })

  it('signs the SDK client requests with them (DescribeTable on dynalite)', async () => {
    // Prepare
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDLAMBDA')
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret')
    const client = clientWithEnvironmentCredentials()

    // Act
    const out = await client.send(new DescribeTableCommand({ TableName: config.tableName }))

    // Assess
    expect(out.Table?.TableName).toBe(config.tableName)
    client.destroy()
  })

  it('fails the request with a clear message when the environment has no keys', async () => {
    // Prepare
    vi.stubEnv('AWS_ACCESS_KEY_ID', '')
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '')
    const client = clientWithEnvironmentCredentials()

    // Act
    const sent = client.send(new DescribeTableCommand({ TableName: config.tableName }))

    // Assess
    await expect(sent).rejects.toThrow('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables are not set')
    client.destroy()
  })
})
