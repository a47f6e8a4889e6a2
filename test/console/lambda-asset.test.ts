import { execSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LAMBDA_ESBUILD_OPTIONS } from '../../infra/bundling.js'
import { CONSOLE_COMMAND_HOOKS, CONSOLE_FUNCTION_ID } from '../../infra/console-bundling.js'
import { lambdaContext, restEvent } from '../support/events.js'

type Handler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; body: string; isBase64Encoded: boolean }>

const outdir = mkdtempSync(join(tmpdir(), 'loom-console-asset-'))
let bundleText: string
let handler: Handler

// The deployed shape: the handler bundled as CDK bundles it, then CDK's afterBundling hook builds the console into
// `console/` of the same asset folder. The bundle must serve those files without esbuild.
beforeAll(async () => {
  await build({
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints: { index: join('functions', CONSOLE_FUNCTION_ID, 'handler.ts') },
    sourcemap: false,
    absWorkingDir: process.cwd(),
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'silent',
  })
  for (const command of CONSOLE_COMMAND_HOOKS.afterBundling(process.cwd(), outdir)) {
    execSync(command, { stdio: 'pipe' })
  }
  bundleText = readFileSync(join(outdir, 'index.mjs'), 'utf8')
  handler = ((await import(/* @vite-ignore */ pathToFileURL(join(outdir, 'index.mjs')).href)) as { handler: Handler })
    .handler
}, 120_000)

afterAll(() => rmSync(outdir, { recursive: true, force: true }))

describe('the deployed console function', () => {
  it('bundles neither esbuild nor the console sources', () => {
    expect(bundleText).not.toContain('esbuild')
    expect(bundleText).not.toContain('data-testid')
    expect(Buffer.byteLength(bundleText)).toBeLessThan(400_000)
  })

  it('serves the prebuilt page and its hashed files from the asset folder', async () => {
    // Prepare
    const manifest = JSON.parse(readFileSync(join(outdir, 'console', 'manifest.json'), 'utf8')) as { app: string[] }

    // Act
    const page = await handler(restEvent({ path: '/console/' }), lambdaContext())
    const script = await handler(restEvent({ path: `/console/${manifest.app[0]}` }), lambdaContext())

    // Assess
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`src="${manifest.app[0]}"`)
    expect(script.statusCode).toBe(200)
    expect(script.body).toBe(readFileSync(join(outdir, 'console', manifest.app[0] ?? ''), 'utf8'))
  })
})
