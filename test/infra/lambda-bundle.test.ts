import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { config } from '#shared/config'
import { LAMBDA_ESBUILD_OPTIONS } from '../../infra/bundling.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { authorizerFor } from '../support/calls.js'
import { restEvent } from '../support/events.js'
import { invokeLambda } from '../support/lambda-invoke.js'

const outdir = mkdtempSync(join(tmpdir(), 'loom-bundle-'))
const FUNCTIONS = ['tracing/create-obj', 'tracing/read-obj']
let metafile: Metafile
let caller: TestCaller

// The deployed bundles (infra/bundling.ts: SDK inside, environment-only credential provider), run against this file's
// dynalite. Each bundle has its own copy of shared/config, which reads the environment when the bundle loads.
beforeAll(async () => {
  const result = await build({
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints: Object.fromEntries(FUNCTIONS.map((id) => [id, join('functions', id, 'handler.ts')])),
    sourcemap: false,
    absWorkingDir: process.cwd(),
    outdir,
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'silent',
  })
  metafile = result.metafile
  vi.stubEnv('DYNAMODB_ENDPOINT', config.dynamoEndpoint ?? '')
  vi.stubEnv('LOOM_TABLE_NAME', config.tableName ?? '')
  caller = await newCaller()
})

afterAll(() => {
  vi.unstubAllEnvs()
  rmSync(outdir, { recursive: true, force: true })
})

async function bundled(id: string): Promise<Parameters<typeof invokeLambda>[0]> {
  const mod = (await import(/* @vite-ignore */ pathToFileURL(join(outdir, `${id}.mjs`)).href)) as {
    handler: Parameters<typeof invokeLambda>[0]
  }
  return mod.handler
}

describe('deployed function bundles', () => {
  it('replace the default credential chain with the environment provider and stay under 400 KB', () => {
    for (const id of FUNCTIONS) {
      // Act
      const output = metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith(`${id}.mjs`)) ?? '']
      const inputs = Object.keys(output?.inputs ?? {})

      // Assess
      expect(inputs, id).toContain('shared/db/lambda-credentials.ts')
      expect(
        inputs.some((i) => i.includes('@aws-sdk/client-dynamodb/')),
        id,
      ).toBe(true)
      expect(
        inputs.filter((i) => /credential-provider-(node|ini|sso|process|web-identity)|nested-clients/.test(i)),
        id,
      ).toEqual([])
      expect(statSync(join(outdir, `${id}.mjs`)).size, id).toBeLessThan(400 * 1024)
    }
  })

  it('write and read an object through their handlers (buffered, streamed) against DynamoDB (dynalite)', async () => {
    // Prepare
    const [create, read] = await Promise.all(FUNCTIONS.map(bundled))
    if (create === undefined || read === undefined) throw new Error('missing bundle')
    const project = `${caller.entity}/bundle`
    const event = (path: string, body: unknown) =>
      restEvent({
        method: 'POST',
        path,
        headers: { ...caller.basic, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        authorizer: authorizerFor(caller),
      })

    // Act
    const created = await invokeLambda(
      create,
      event('/obj/create', { obj: { project_id: project, object_id: 'o', val: { bundled: true } } }),
    )
    const fetched = await invokeLambda(
      read,
      event('/obj/read', { project_id: project, object_id: 'o', digest: 'latest' }),
    )

    // Assess
    expect(created).toMatchObject({ streamed: false, statusCode: 200 })
    const { digest } = JSON.parse(created.body) as { digest: string }
    expect(fetched).toMatchObject({ streamed: true, statusCode: 200 })
    expect(JSON.parse(fetched.body)).toMatchObject({ obj: { digest, val: { bundled: true } } })
  })
})
