/**
 * `npm run bench:console`: the Loom Console in Chromium (Debian's, driven by playwright-core) against the local stack
 * in this process (every function, an in-memory dynalite): shipped JS + CSS gzipped, the Traces page of a project with
 * 100,000 calls, the trace view of a 10,000-call trace (first rows, and frame times while scrolling) and a 30-day
 * hourly usage chart of 10 models. Calls are stored straight through the data layer (the items `call/upsert_batch`
 * writes, and the call counter as a million-call bench leaves it), usage through the meter. Prints each figure against
 * its target, with the CPU model, for docs/benchmarks.md. Not a test: nothing here asserts a timing.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { cpus } from 'node:os'
import { serve } from '@hono/node-server'
import dynalite from 'dynalite'
import type { Page } from 'playwright-core'
import { createApiKey } from '#shared/auth/key-admin'
import { config } from '#shared/config'
import { endRecord, startRecord } from '#shared/db/call-records'
import { putCallItems } from '#shared/db/call-repository'
import { ensureTable } from '#shared/db/ensure-table'
import { referenceCatalogModel } from '#shared/engine/settings'
import { flushUsage, recordUsage } from '#shared/inference/usage-meter'
import { uuidv7 } from '#shared/tracing/ids'
import { createLocalApp } from '../scripts/local/app.js'
import { CHROMIUM_MISSING, findChromium } from '../test/support/chromium.js'
import { launchChromium, WIDE } from '../test/support/console-browser.js'
import { addToCallCount } from './support/call-count.js'
import { cpuModel } from './support/processes.js'

const PROJECT_CALLS = Number(process.env.BENCH_CONSOLE_CALLS ?? 100_000)
const TRACE_CALLS = Number(process.env.BENCH_CONSOLE_TRACE_CALLS ?? 10_000)
const USAGE_MODELS = 10
const USAGE_HOURS = 30 * 24
const RUNS = 5
const ENTITY = 'bench'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? 0
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES')
// A 60 Hz refresh is 16.67 ms apart, and the page's clock has a 0.1 ms resolution (Chromium coarsens
// performance.now()), so frames that each land on their refresh read 16.6-16.8 ms: a p95 of 16.8 ms is 60 fps.
const SMOOTH_P95_MS = 16.8

// Items as call/upsert_batch stores them (start + end part), with small inputs and outputs.
function callItems(project: string, traceId: string, parentId: string | undefined, startedMs: number) {
  const id = uuidv7(startedMs)
  const started = new Date(startedMs).toISOString()
  const ended = new Date(startedMs + 120 + (startedMs % 900)).toISOString()
  const usage = { 'gpt-4o': { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160, requests: 1 } }
  return {
    id,
    items: [
      startRecord({
        project_id: project,
        id,
        op_name: `weave:///${project}/op/step_${startedMs % 7}:abc123`,
        trace_id: traceId,
        ...(parentId === undefined ? {} : { parent_id: parentId }),
        started_at: `${started.slice(0, 23)}000Z`,
        attributes: { json: '{"weave":{"source":"bench"}}' },
        inputs: { json: JSON.stringify({ prompt: 'lorem ipsum dolor', i: startedMs % 1000 }) },
        wb_user_id: 'bench-user',
        size: 200,
      }),
      endRecord({
        project_id: project,
        id,
        trace_id: traceId,
        ended_at: `${ended.slice(0, 23)}000Z`,
        output: { json: '{"text":"sit amet"}' },
        summary: { json: JSON.stringify({ usage }) },
        size: 150,
      }),
    ],
  }
}

async function seedProjectCalls(project: string): Promise<void> {
  const base = Date.now() - PROJECT_CALLS * 1000
  const chunk = 5_000
  for (let i = 0; i < PROJECT_CALLS; i += chunk) {
    const items = Array.from({ length: Math.min(chunk, PROJECT_CALLS - i) }, (_, j) => {
      const at = base + (i + j) * 1000
      return callItems(project, randomUUID(), undefined, at).items
    }).flat()
    await putCallItems(items)
  }
  await addToCallCount(project, PROJECT_CALLS)
}

async function seedTrace(project: string): Promise<string> {
  const traceId = randomUUID()
  const base = Date.now() - 3_600_000
  const ids: string[] = []
  const items: Record<string, unknown>[] = []
  for (let i = 0; i < TRACE_CALLS; i++) {
    const parent = i === 0 ? undefined : ids[Math.floor((i - 1) / 4)]
    const call = callItems(project, traceId, parent, base + i * 10)
    ids.push(call.id)
    items.push(...call.items)
  }
  await putCallItems(items)
  await addToCallCount(project, TRACE_CALLS)
  return traceId
}

async function seedUsage(project: string): Promise<void> {
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000
  for (let m = 0; m < USAGE_MODELS; m++) {
    const model = referenceCatalogModel({ id: `bench/model-${m}` })
    for (let h = 0; h < USAGE_HOURS; h++) {
      recordUsage({
        entity: ENTITY,
        project,
        model,
        usage: { prompt_tokens: 100 + ((h * 7 + m * 13) % 400), completion_tokens: 20 + ((h * 3 + m) % 90) },
        aborted: false,
        at: new Date(hour - h * 3_600_000 + 60_000),
      })
      // A flush writes every batched counter at once: a few hundred at a time keeps dynalite's queue short.
      if ((h + 1) % 120 === 0) await flushUsage()
    }
  }
  await flushUsage()
}

/** A fresh document load of a console route (not a hash change), so every figure starts at navigation. */
async function load(page: Page, url: string): Promise<void> {
  await page.goto('about:blank')
  await page.goto(url)
}

/** Time from navigation start to the first element matching `selector` in the DOM (a MutationObserver notes it). */
async function firstSeen(page: Page, selector: string): Promise<number> {
  await page.waitForSelector(selector)
  return page.evaluate<number>('window.loomFirstSeen ?? NaN')
}

async function signIn(page: Page, base: string, key: string, project: string): Promise<void> {
  await load(page, `${base}/console/#/signin`)
  await page.getByTestId('signin-key').fill(key)
  await page.getByTestId('signin-submit').click()
  await page.getByTestId('project-typed').fill(project)
  await page.getByTestId('project-open').click()
  await page.getByTestId('page-traces').waitFor()
}

/** Switches the signed-in tab to another project, as the sign-in page's picker would. */
async function chooseProject(page: Page, project: string): Promise<void> {
  await page.evaluate(`sessionStorage.setItem('loom.console.project', ${JSON.stringify(project)})`)
}

/** Scrolls the element by `step` px per animation frame for `frames` frames; returns the frame intervals in ms. */
function scrollFrames(page: Page, selector: string, step: number, frames: number): Promise<number[]> {
  return page.evaluate<number[]>(`new Promise((resolve) => {
    const el = document.querySelector(${JSON.stringify(selector)})
    const times = []
    const tick = (t) => {
      times.push(t)
      el.scrollTop += ${step}
      if (times.length > ${frames}) resolve(times.slice(1).map((x, i) => x - times[i]))
      else requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })`)
}

async function main() {
  const store = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', () => resolve()))
  config.dynamoEndpoint = `http://127.0.0.1:${(store.address() as AddressInfo).port}`
  config.tableName = `loom-bench-${randomUUID().slice(0, 8)}`
  await ensureTable(config.tableName)
  const executable = findChromium()
  if (executable === undefined) throw new Error(CHROMIUM_MISSING)
  const { key } = await createApiKey({ userId: 'bench-user', entity: ENTITY })
  const app = await createLocalApp()
  const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => http.once('listening', resolve))
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const out: string[] = []
  const log = (line: string) => {
    out.push(line)
    process.stderr.write(`${line}\n`)
  }
  log(`Run: ${new Date().toISOString()}, CPU ${cpuModel()} (${cpus().length} cores), Node ${process.version}`)

  const t0 = performance.now()
  await seedProjectCalls(`${ENTITY}/traces`)
  const traceId = await seedTrace(`${ENTITY}/trace`)
  await seedUsage('usage')
  const usage = await app.request(
    `/v1/usage?project=${ENTITY}/usage&start=${new Date(Date.now() - 31 * 86_400_000).toISOString()}`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  )
  const requests = ((await usage.json()) as { total: { requests: number } }).total.requests
  if (requests !== USAGE_MODELS * USAGE_HOURS)
    throw new Error(`usage seeded ${requests} requests, not ${USAGE_MODELS * USAGE_HOURS}`)
  // The API alone (in-process, no browser): the Traces page's first request, to tell the server's share from the page's.
  const apiTimes: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const q0 = performance.now()
    const res = await app.request('/calls/stream_query', {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        project_id: `${ENTITY}/traces`,
        filter: { trace_roots_only: true },
        sort_by: [{ field: 'started_at', direction: 'desc' }],
        limit: 50,
        include_costs: true,
      }),
    })
    if (res.status !== 200) throw new Error(`calls/stream_query ${res.status}`)
    await res.text()
    apiTimes.push(performance.now() - q0)
  }
  process.stderr.write(`(seeded in ${fmt((performance.now() - t0) / 1000)} s)\n`)

  const browser = await launchChromium(executable)
  log(`Chromium ${browser.version()} headless, viewport ${WIDE.width}×${WIDE.height}`)
  const context = await browser.newContext({ viewport: WIDE })
  const page = await context.newPage()
  // Notes when a row of the Traces table or of the call tree first appears (ms since navigation start). Page-side
  // code is passed as text: tsx's transform would wrap named functions in a helper the page does not have.
  await page.addInitScript({
    content: `new MutationObserver((_, seen) => {
      if (document.querySelector('[data-testid=traces-row], [data-testid=trace-tree-row]') === null) return
      window.loomFirstSeen = performance.now()
      seen.disconnect()
    }).observe(document, { childList: true, subtree: true })`,
  })

  // 1. What the console ships: every script and style sheet a page load fetches from /console/, Swagger UI aside.
  const shipped = new Map<string, { encoded: number; decoded: number }>()
  page.on('requestfinished', async (request) => {
    const path = new URL(request.url()).pathname
    if (!path.startsWith('/console/') || path.includes('swagger')) return
    if (!['script', 'stylesheet'].includes(request.resourceType())) return
    const sizes = await request.sizes()
    const body = await (await request.response())?.body()
    shipped.set(path, { encoded: sizes.responseBodySize, decoded: body?.length ?? 0 })
  })
  await signIn(page, base, key, `${ENTITY}/traces`)
  // Every script and style sheet has loaded once the first row is drawn; the API requests may still be running.
  await page.locator('[data-testid=traces-row]').first().waitFor({ timeout: 60_000 })
  await page.waitForLoadState('load')
  const encoded = [...shipped.values()].reduce((s, f) => s + f.encoded, 0)
  const decoded = [...shipped.values()].reduce((s, f) => s + f.decoded, 0)
  log(
    `shipped JS + CSS (${[...shipped.keys()].map((p) => p.slice('/console/'.length)).join(', ')}): ` +
      `${fmt(encoded / 1024, 1)} KB gzipped (${fmt(decoded / 1024, 1)} KB as served unzipped), target ≤ 150 KB: ` +
      verdict(encoded <= 150 * 1024),
  )

  // 2. Traces page of a project with 100,000 calls: navigation to the first rows.
  const tracesTimes: number[] = []
  // When the total (calls/query_stats for the default roots-only view, counted up to the page's 10,000) is shown.
  const totalTimes: number[] = []
  for (let i = 0; i < RUNS; i++) {
    await load(page, `${base}/console/#/traces`)
    tracesTimes.push(await firstSeen(page, '[data-testid=traces-row]'))
    await page.getByTestId('traces-total').filter({ hasText: 'traces' }).waitFor({ timeout: 300_000 })
    totalTimes.push(await page.evaluate<number>('performance.now()'))
  }
  const total = await page.getByTestId('traces-total').textContent()
  log(
    `Traces page, ${fmt(PROJECT_CALLS)} calls (total shown: ${total}): navigation → first rows median ` +
      `${fmt(median(tracesTimes))} ms (runs ${tracesTimes.map((t) => fmt(t)).join(', ')}), target ≤ 1,000 ms: ` +
      verdict(median(tracesTimes) <= 1000),
  )
  log(
    `  the total shown (calls/query_stats over the roots, counted up to 10,000) after median ${fmt(median(totalTimes))} ms ` +
      `(runs ${totalTimes.map((t) => fmt(t)).join(', ')}, at most, measured once the total was seen)`,
  )
  log(
    `  the API alone: calls/stream_query (newest 50 roots, in-process, no browser) median ${fmt(median(apiTimes))} ms ` +
      `(runs ${apiTimes.map((t) => fmt(t)).join(', ')})`,
  )

  // 3. Trace view of a 10,000-call trace: first rows, the whole tree, then frame times while scrolling it.
  await chooseProject(page, `${ENTITY}/trace`)
  const treeFirst: number[] = []
  const treeAll: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await load(page, `${base}/console/#/trace/${traceId}`)
    treeFirst.push(await firstSeen(page, '[data-testid=trace-tree-row]'))
    await page.locator(`[data-testid=trace-tree][data-row-count="${TRACE_CALLS}"]`).waitFor({ timeout: 60_000 })
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor({ timeout: 60_000 })
    treeAll.push(performance.now() - started)
  }
  log(
    `Trace view, ${fmt(TRACE_CALLS)}-call trace: navigation → first tree rows median ${fmt(median(treeFirst))} ms ` +
      `(runs ${treeFirst.map((t) => fmt(t)).join(', ')}), target ≤ 1,000 ms: ${verdict(median(treeFirst) <= 1000)}; ` +
      `all ${fmt(TRACE_CALLS)} calls loaded and drawn: median ${fmt(median(treeAll))} ms`,
  )
  const frames = await scrollFrames(page, '[data-testid=trace-tree]', 280, 300)
  const domRows = await page.getByTestId('trace-tree-row').count()
  log(
    `Trace view scrolling (300 frames, 10 rows a frame, ${domRows} rows in the DOM): frame interval median ` +
      `${fmt(median(frames), 1)} ms, p95 ${fmt(pct(frames, 0.95), 1)} ms, max ${fmt(Math.max(...frames), 1)} ms, ` +
      `${frames.filter((f) => f > 25).length} of ${frames.length} frames over 25 ms (a missed 60 Hz refresh), ` +
      `target 60 fps, every frame on its refresh (p95 ≤ ${SMOOTH_P95_MS} ms and no missed refresh): ` +
      `${verdict(pct(frames, 0.95) <= SMOOTH_P95_MS && frames.every((f) => f <= 25))}`,
  )

  // 4. A 30-day hourly usage chart, 720 points × 10 models: uPlot's first draw (the console's own user-timing measure).
  await chooseProject(page, `${ENTITY}/usage`)
  const draws: number[] = []
  let points = 0
  for (let i = 0; i < RUNS; i++) {
    await load(page, `${base}/console/#/usage`)
    await page.getByTestId('usage-range').selectOption('30d')
    await page
      .getByTestId('usage-table')
      .locator('tr')
      .nth(USAGE_MODELS * USAGE_HOURS)
      .waitFor({ timeout: 60_000 })
    await page.locator('[data-testid=usage-chart] .uplot canvas').waitFor()
    const measures = await page.evaluate<number[]>(
      "performance.getEntriesByName('chart usage-chart').map((e) => e.duration)",
    )
    draws.push(measures.at(-1) ?? Number.NaN)
    points = (await page.getByTestId('usage-row').count()) / USAGE_MODELS
  }
  log(
    `Usage chart, 30 days hourly (${fmt(points)} points × ${USAGE_MODELS} series, stacked): uPlot first draw median ` +
      `${fmt(median(draws), 1)} ms (runs ${draws.map((t) => fmt(t, 1)).join(', ')}), target ≤ 100 ms: ` +
      verdict(median(draws) <= 100),
  )

  await browser.close()
  await new Promise<void>((resolve) => http.close(() => resolve()))
  await new Promise<void>((resolve) => store.close(() => resolve()))
  process.stdout.write(`${out.join('\n')}\n`)
}

await main()
