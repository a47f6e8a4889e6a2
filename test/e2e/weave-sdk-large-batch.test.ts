import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { config, MAX_BODY_BYTES } from '#shared/config'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { runWeaveScript, serveTracing, type TracingServer } from '../support/weave-sdk.js'

// What the weave npm SDK sends when calls are large: its batches grow to 10 MiB of JSON, and version 0.11 retries a
// refused batch and ends its own process after ten failures (docs/tracing.md, §1 Limits). Eight concurrent ops each
// return 700 KB (one batch of about 5.6 MB, over Lambda's limit, under the local server's) and one throws a 450 KB
// message (more than a DynamoDB item holds), all against the local server's default body limit.
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const retrieve = weave.op(async function retrieve(i) { return { doc: String(i).repeat(700 * 1024) } }, { name: 'retrieve' })
  const fails = weave.op(async function fails() { throw new Error('E'.repeat(450000)) }, { name: 'fails' })
  const docs = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => retrieve(i)))
  let thrown = 0
  try { await fails() } catch (e) { thrown = e.message.length }
  await client.waitForBatchProcessing()
  process.stdout.write(JSON.stringify({ docs: docs.length, thrown }) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

let server: TracingServer
let caller: TestCaller
let project: string
let run: { docs: number; thrown: number }

beforeAll(async () => {
  // The tests run with Lambda's limit (vitest.config.ts); this file serves as `npm start` does.
  config.maxBodyBytes = MAX_BODY_BYTES.server
  server = await serveTracing()
  caller = await newCaller()
  project = `${caller.entity}/sdk-large`
  run = await runWeaveScript(SCRIPT, server, { PROJECT: project, WANDB_API_KEY: caller.key })
}, 90_000)

afterAll(async () => {
  await server.close()
})

describe('weave npm SDK batches of large calls against the local server', () => {
  it('stores every call of a 5.6 MB batch and an exception longer than an item, with no request refused', async () => {
    // Act
    const res = await server.app.request(
      '/calls/stream_query',
      jsonInit({ project_id: project, columns: ['id', 'op_name', 'output', 'exception'] }, caller.basic),
    )
    const calls = (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { op_name: string; output: { doc: string } | null; exception: string | null })

    // Assess
    expect(run).toEqual({ docs: 8, thrown: 450_000 })
    expect(server.failures).toEqual([])
    const docs = calls.filter((c) => c.op_name.includes('/op/retrieve:'))
    expect(docs.map((c) => c.output?.doc.length)).toEqual(Array(8).fill(700 * 1024))
    const failed = calls.filter((c) => c.op_name.includes('/op/fails:'))
    expect(failed.map((c) => c.exception)).toEqual(['E'.repeat(450_000)])
  })
})
