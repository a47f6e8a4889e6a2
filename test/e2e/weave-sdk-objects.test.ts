import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller, type TestCaller } from '../support/auth.js'

// The weave npm SDK keeps a global client and batch timers, so it runs in a child process (docs/tracing.md §16.4)
// against this process's functions served over loopback HTTP.
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const plainRef = await client.publish({ name: 'cfg', temperature: 0.5, tags: ['a', 'é'] }, 'settings')
  const plain = await client.get(plainRef)
  const dataset = new weave.Dataset({ id: 'grammar', rows: [{ id: '0', text: 'a' }, { id: '1', text: 'b' }] })
  const datasetRef = await dataset.save()
  const loaded = await client.get(datasetRef)
  const rows = []
  for await (const row of loaded) rows.push({ id: row.id, text: row.text })
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e221bc330000000049454e44ae426082', 'hex')
  const imageRef = await client.publish({ picture: weave.weaveImage({ data: png, imageType: 'png' }) }, 'with-image')
  const image = await client.get(imageRef)
  process.stdout.write(JSON.stringify({ plainRef: plainRef.uri(), plain, datasetRef: datasetRef.uri(), rows, imageRef: imageRef.uri(), picture: image.picture, png: png.toString('hex') }) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

let server: ReturnType<typeof serve>
let url: string
let caller: TestCaller

beforeAll(async () => {
  const app = await createLocalApp(FUNCTIONS.filter((f) => f.family === 'tracing' && !f.longRunning))
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  caller = await newCaller()
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

function runSdk(project: string): Promise<{ code: number | null; out: string; err: string }> {
  const weavePath = createRequire(import.meta.url).resolve('weave')
  const cwd = mkdtempSync(join(tmpdir(), 'loom-weave-'))
  const child = spawn(process.execPath, ['-e', SCRIPT], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      WEAVE_PATH: weavePath,
      PROJECT: project,
      WANDB_API_KEY: caller.key,
      WF_TRACE_SERVER_URL: url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += String(d)
  })
  child.stderr.on('data', (d) => {
    err += String(d)
  })
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      rmSync(cwd, { recursive: true, force: true })
      resolve({ code, out, err })
    })
  })
}

describe('weave npm SDK against the object, table and file functions', () => {
  it('publishes and reads back an object, a dataset with its table, and an image file', async () => {
    // Act
    const project = `${caller.entity}/sdk`
    const res = await runSdk(project)

    // Assess
    expect(res.code, res.err).toBe(0)
    const line = res.out.split('\n').find((l) => l.startsWith('{'))
    const result = JSON.parse(line ?? '{}')
    expect(result.plainRef).toMatch(new RegExp(`^weave:///${project}/object/settings:[A-Za-z0-9]{43}$`))
    expect(result.plain).toMatchObject({ name: 'cfg', temperature: 0.5, tags: ['a', 'é'] })
    expect(result.datasetRef).toMatch(new RegExp(`^weave:///${project}/object/Dataset:[A-Za-z0-9]{43}$`))
    expect(result.rows).toEqual([
      { id: '0', text: 'a' },
      { id: '1', text: 'b' },
    ])
    expect(result.imageRef).toMatch(/\/object\/with-image:/)
    expect(result.picture).toMatchObject({ _type: 'CustomWeaveType', files: expect.any(Object) })
    const [digest] = Object.values(result.picture.files as Record<string, string>)
    const file = await fetch(`${url}/file/content`, {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: project, digest }),
    })
    expect(Buffer.from(await file.arrayBuffer()).toString('hex')).toBe(result.png)
  }, 90_000)
})
