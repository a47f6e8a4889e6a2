import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'

// This file loads fresh copies of modules; the worker's next file starts from a clean registry (test files share
// their worker: vitest.config.ts, `isolate: false`).
afterAll(() => {
  vi.resetModules()
})

// Each case loads a fresh copy of the module, which reads the environment once at load.
async function loadConfig() {
  vi.resetModules()
  return import('#shared/config')
}

beforeEach(() => {
  vi.unstubAllEnvs()
})

describe('LOOM_DYNAMODB', () => {
  it('defaults to dynalite and accepts local, in any case', async () => {
    vi.stubEnv('LOOM_DYNAMODB', '')
    expect((await loadConfig()).localConfig.dynamoEngine).toBe('dynalite')
    vi.stubEnv('LOOM_DYNAMODB', ' Local ')
    expect((await loadConfig()).localConfig.dynamoEngine).toBe('local')
    vi.stubEnv('LOOM_DYNAMODB', 'dynalite')
    expect((await loadConfig()).localConfig.dynamoEngine).toBe('dynalite')
  })

  it('fails fast on an unknown engine', async () => {
    vi.stubEnv('LOOM_DYNAMODB', 'cassandra')
    await expect(loadConfig()).rejects.toThrow(
      `LOOM_DYNAMODB environment variable must be 'dynalite' or 'local', got "cassandra"`,
    )
  })
})

describe('LOOM_MAX_BODY_BYTES', () => {
  it("defaults to Lambda's 5 MiB in Lambda and to 32 MiB elsewhere, where the weave SDK's 10 MiB batches fit", async () => {
    vi.stubEnv('LOOM_MAX_BODY_BYTES', '')
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', '')
    expect((await loadConfig()).config.maxBodyBytes).toBe(32 * 1024 * 1024)
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'loom-tracing-upsert-call-batch')
    expect((await loadConfig()).config.maxBodyBytes).toBe(5 * 1024 * 1024)
    vi.stubEnv('LOOM_MAX_BODY_BYTES', '1000')
    expect((await loadConfig()).config.maxBodyBytes).toBe(1000)
  })
})

describe('PORT', () => {
  it('refuses a port past 65535 as a setting, in one line, rather than failing in listen with a stack (QA)', async () => {
    vi.stubEnv('PORT', '99999')
    await expect(loadConfig()).rejects.toThrow(
      'PORT environment variable must be an integer from 0 to 65535, got "99999"',
    )
    vi.stubEnv('PORT', '65535')
    expect((await loadConfig()).localConfig.port).toBe(65_535)
  })
})
