import { execSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { config } from '#shared/config'
import { LAMBDA_ESBUILD_OPTIONS } from '../../infra/bundling.js'
import { PRICED_FUNCTION_IDS, PRICES_COMMAND_HOOKS } from '../../infra/prices-bundling.js'
import { newCaller } from '../support/auth.js'
import { authorizerFor, endPart, newProject, startPart, writeCalls } from '../support/calls.js'
import { lambdaContext, restEvent } from '../support/events.js'

type Buffered = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>

const outdir = mkdtempSync(join(tmpdir(), 'loom-prices-asset-'))
// Every function that imports the pricing module, priced or not.
const IMPORTERS = [...PRICED_FUNCTION_IDS, 'tracing/delete-calls', 'tracing/update-call']
const NEVER_PRICE = new Set(['tracing/delete-calls', 'tracing/update-call'])
let metafile: Metafile

// The deployed shape: each function bundled as CDK bundles it into its own folder (`index.mjs`), then the priced
// ones get CDK's afterBundling hook, which copies the price table beside the bundle.
beforeAll(async () => {
  for (const id of IMPORTERS) {
    const dir = join(outdir, id)
    mkdirSync(dir, { recursive: true })
    const result = await build({
      ...LAMBDA_ESBUILD_OPTIONS,
      entryPoints: { index: join('functions', id, 'handler.ts') },
      sourcemap: false,
      absWorkingDir: process.cwd(),
      outdir: dir,
      outExtension: { '.js': '.mjs' },
      metafile: true,
      logLevel: 'silent',
    })
    metafile = {
      inputs: { ...metafile?.inputs, ...result.metafile.inputs },
      outputs: { ...metafile?.outputs, ...result.metafile.outputs },
    }
    if (PRICED_FUNCTION_IDS.has(id)) {
      for (const command of PRICES_COMMAND_HOOKS.afterBundling(process.cwd(), dir)) execSync(command, { stdio: 'pipe' })
    }
  }
  vi.stubEnv('DYNAMODB_ENDPOINT', config.dynamoEndpoint ?? '')
  vi.stubEnv('LOOM_TABLE_NAME', config.tableName ?? '')
}, 120_000)

afterAll(() => {
  vi.unstubAllEnvs()
  rmSync(outdir, { recursive: true, force: true })
})

describe('the price table in deployed functions', () => {
  it('is not compiled into any bundle, which stays under 400 KB', () => {
    for (const id of IMPORTERS) {
      const text = readFileSync(join(outdir, id, 'index.mjs'), 'utf8')
      expect(text, id).not.toContain('gpt-4o-mini-2024-07-18')
      expect(Buffer.byteLength(text), id).toBeLessThan(400 * 1024)
    }
    expect(Object.keys(metafile.inputs)).toContain('shared/tracing/costs.ts')
    expect(Object.keys(metafile.inputs).some((i) => i.endsWith('default-prices.json'))).toBe(false)
  })

  it('ships beside the bundle of the priced functions, which price a dated model name with it', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { started_at: '2026-01-01T00:00:00Z' })
    const summary = { usage: { 'gpt-4o-mini-2024-07-18': { prompt_tokens: 1_000_000, completion_tokens: 0 } } }
    await writeCalls(caller, [{ start, end: endPart(project, start.id as string, { summary }) }])
    const mod = (await import(
      /* @vite-ignore */ pathToFileURL(join(outdir, 'tracing/trace-usage', 'index.mjs')).href
    )) as { handler: Buffered }

    // Act
    const res = await mod.handler(
      restEvent({
        method: 'POST',
        path: '/trace/usage',
        headers: { ...caller.basic, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: project, include_costs: true }),
        authorizer: authorizerFor(caller),
      }),
      lambdaContext(),
    )

    // Assess
    expect(res.statusCode).toBe(200)
    const { call_usage } = JSON.parse(res.body) as {
      call_usage: Record<string, Record<string, Record<string, number>>>
    }
    expect(call_usage[start.id as string]?.['gpt-4o-mini-2024-07-18']?.prompt_tokens_total_cost).toBeCloseTo(0.15)
    for (const id of IMPORTERS) {
      expect(existsSync(join(outdir, id, 'default-prices.json')), id).toBe(!NEVER_PRICE.has(id))
    }
  })
})
