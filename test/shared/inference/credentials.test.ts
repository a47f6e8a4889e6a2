import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { resolveCredential } from '#shared/inference/credentials'

afterEach(() => {
  vi.unstubAllEnvs()
})

// The AWS Parameters and Secrets Lambda extension's documented local HTTP interface, served on loopback.
async function secretsExtension(secrets: Record<string, string>) {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = []
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers })
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('secretId') ?? ''
    const value = secrets[id]
    if (value === undefined) {
      res.writeHead(400).end('{"message":"not found"}')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Name: id, SecretString: value }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.address() as AddressInfo).port
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe('upstream credentials', () => {
  it('reads env: references from the environment; unset ones, and values that are no reference, a 503 naming the model', async () => {
    // Prepare
    vi.stubEnv('LOOM_TEST_CREDENTIAL', 'sk-from-env')

    // Act
    const set = await resolveCredential('env:LOOM_TEST_CREDENTIAL', 'org/m')
    const unset = await resolveCredential('env:LOOM_TEST_UNSET_CREDENTIAL', 'org/m').catch((e: unknown) => e)
    const unknown = await resolveCredential('vault:x', 'org/m').catch((e: unknown) => e)
    const plaintext = await resolveCredential('sk-live-plaintext', 'org/m').catch((e: unknown) => e)
    const none = await resolveCredential(undefined, 'org/m')

    // Assess
    expect(set).toBe('sk-from-env')
    // Permanent until an operator acts: the OpenAI SDKs are told not to retry (docs/inference.md §4.4).
    const headers = { 'x-should-retry': 'false' }
    const notConfigured = {
      statusCode: 503,
      message: 'The upstream credential of model `org/m` is not configured',
      headers,
    }
    expect(unset).toMatchObject(notConfigured)
    expect(String((unset as Error).message)).not.toContain('LOOM_TEST_UNSET_CREDENTIAL')
    // Not a reference at all (written past the checks, perhaps a pasted key): misconfigured, and never repeated.
    const misconfigured = {
      statusCode: 503,
      message:
        'The upstream credential of model `org/m` is misconfigured: its reference must be env:NAME or secret:<id>',
      headers,
    }
    expect(unknown).toMatchObject(misconfigured)
    expect(plaintext).toMatchObject(misconfigured)
    expect(String((plaintext as Error).cause)).not.toContain('sk-live-plaintext')
    expect(none).toBeUndefined()
  })

  it('fetches secret: references through the Lambda extension with the session token, and caches them', async () => {
    // Prepare
    const extension = await secretsExtension({ 'prod/upstream-key': 'sk-from-secrets-manager' })
    vi.stubEnv('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', String(extension.port))
    vi.stubEnv('AWS_SESSION_TOKEN', 'session-token')

    // Act
    const first = await resolveCredential('secret:prod/upstream-key', 'org/m')
    const second = await resolveCredential('secret:prod/upstream-key', 'org/m')
    const missing = await resolveCredential('secret:prod/none', 'org/m').catch((e: unknown) => e)
    await extension.close()

    // Assess
    expect(first).toBe('sk-from-secrets-manager')
    expect(second).toBe(first)
    expect(extension.seen.filter((r) => r.url.includes('upstream-key'))).toHaveLength(1)
    expect(extension.seen[0]?.headers['x-aws-parameters-secrets-token']).toBe('session-token')
    expect(missing).toMatchObject({
      statusCode: 503,
      message: 'The upstream credential of model `org/m` cannot be read',
      headers: { 'x-should-retry': 'false' },
    })
  })
})
