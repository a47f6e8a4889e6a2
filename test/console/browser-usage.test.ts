import OpenAI from 'openai'
import type { Browser, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addMembership } from '#shared/db/membership-repository'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache } from '#shared/inference/catalog'
import { flushUsage } from '#shared/inference/usage-meter'
import { type CallFilters, callsStatsRequest } from '../../console/src/lib/calls.js'
import { formatCount, formatDate, formatTokens, formatTotal, plural } from '../../console/src/lib/format.js'
import { createLocalApp } from '../../scripts/local/app.js'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { findChromium } from '../support/chromium.js'
import { launchChromium, showFresh, WIDE, waitForCount, waitForText, watchPage } from '../support/console-browser.js'
import { runWeaveScript, serveApp, type TracingServer } from '../support/weave-sdk.js'

// The Console's figures in a real Chromium (see browser.test.ts) against the local stack in this process, for a key of
// one entity that is a member of another: the Usage page's entity-wide report is the open project's entity, never the
// key's; a trace's tokens and cost read the same in the Traces table and the trace view (an SDK trace whose client was
// instrumented twice, an OpenTelemetry trace); day buckets are labelled in UTC from a zone behind it; paging and
// sorting do not count the total again; every status a row shows can be filtered on; the op-name filter and sort use
// the name a row shows; times name their zone; an unreachable server and a refused key say so.

// biome-ignore lint/suspicious/noExplicitAny: API answers are checked field by field by the assertions.
type Json = any
// The page's globals the functions run inside it read, typed by hand: the root tsconfig has no DOM library.
type PageGlobals = {
  document: {
    querySelector: (selector: string) => { textContent: string | null } | null
    querySelectorAll: (selector: string) => Iterable<{ textContent: string | null }>
  }
}

const MODEL = 'loom/reference-1'
const ROOTS: CallFilters = { op: '', status: '', from: '', to: '', text: '', rootsOnly: true }
const FILLERS = 60
const ZONE = 'America/Los_Angeles'

// A Weave op traced by the JS SDK around two completions through Loom's gateway. Requiring openai after weave lets the
// SDK instrument it on import, and `wrapOpenAI` wraps it again: each request is recorded by two nested calls, the
// outer one also holding the inner one's usage (the Console QA's trace).
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
const OpenAI = require(process.env.OPENAI_PATH)
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const openai = weave.wrapOpenAI(new OpenAI({
    apiKey: process.env.WANDB_API_KEY,
    baseURL: process.env.WF_TRACE_SERVER_URL + '/v1',
    project: process.env.GATEWAY_PROJECT,
    maxRetries: 0,
  }))
  const ids = {}
  const pipeline = weave.op(async function pipeline(q) {
    ids.trace = weave.requireCurrentCallStackEntry().traceId
    ids.root = weave.requireCurrentCallStackEntry().callId
    const a = await openai.chat.completions.create({ model: 'loom/reference-1', messages: [{ role: 'user', content: q }], max_tokens: 10 })
    const b = await openai.chat.completions.create({ model: 'loom/reference-1', messages: [{ role: 'user', content: q + ' again' }], max_tokens: 10 })
    return a.choices[0].message.content + b.choices[0].message.content
  }, { name: 'rag_pipeline' })
  await pipeline('Tell me about Loom')
  await client.waitForBatchProcessing()
  process.stdout.write(JSON.stringify(ids) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

let server: TracingServer
let caller: TestCaller
// The entity the key belongs to, and the one it is a member of, whose project the Console opens.
let keyEntity: string
let memberEntity: string
let project: string
let browser: Browser
const ids = {
  sdk: { trace: '', root: '' },
  otel: { trace: '', root: '' },
  failedChild: crypto.randomUUID(),
  displayed: crypto.randomUUID(),
}

async function post(path: string, body: Record<string, unknown>): Promise<Json> {
  const res = await fetch(`${server.url}/${path}`, jsonInit({ project_id: project, ...body }, caller.basic))
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

async function usageReport(query: string, headers: Record<string, string> = {}): Promise<Json> {
  const res = await fetch(`${server.url}/v1/usage?${query}`, { headers: { ...caller.bearer, ...headers } })
  if (res.status !== 200) throw new Error(`v1/usage: ${res.status} ${await res.text()}`)
  return res.json()
}

async function complete(inProject: string, times: number): Promise<void> {
  const openai = new OpenAI({ apiKey: caller.key, baseURL: `${server.url}/v1`, project: inProject, maxRetries: 0 })
  for (let i = 0; i < times; i++) {
    await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: `hi ${i}` }],
      max_tokens: 8,
    })
  }
}

type Seeded = { id: string; op: string; parent?: string; display?: string; exception?: string; summary?: object }

// Writes calls through `call/upsert_batch`, ended, a trace of their own unless a parent's.
async function upsert(calls: Seeded[], base: number): Promise<void> {
  const traceOf = new Map<string, string>()
  const batch = calls.flatMap((c, i) => {
    const trace = c.parent === undefined ? crypto.randomUUID() : (traceOf.get(c.parent) as string)
    traceOf.set(c.id, trace)
    const at = base + i * 10
    return [
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id: c.id,
            trace_id: trace,
            ...(c.parent === undefined ? {} : { parent_id: c.parent }),
            ...(c.display === undefined ? {} : { display_name: c.display }),
            op_name: c.op,
            started_at: new Date(at).toISOString(),
            attributes: {},
            inputs: {},
          },
        },
      },
      {
        mode: 'end',
        req: {
          end: {
            project_id: project,
            id: c.id,
            ended_at: new Date(at + 5).toISOString(),
            summary: c.summary ?? {},
            ...(c.exception === undefined ? {} : { exception: c.exception }),
          },
        },
      },
    ]
  })
  const res = await fetch(`${server.url}/call/upsert_batch`, jsonInit({ batch }, caller.basic))
  if (res.status !== 200) throw new Error(`upsert_batch: ${res.status} ${await res.text()}`)
}

async function seed(): Promise<void> {
  await post('cost/create', { costs: { [MODEL]: { prompt_token_cost: 0.001, completion_token_cost: 0.002 } } })
  // The SDK's child process (a second Node loading weave) runs while this process writes the rest.
  const [sdk] = await Promise.all([
    // The doubly instrumented SDK trace, its completions metered in a project of their own.
    runWeaveScript<{ trace: string; root: string }>(SCRIPT, server, {
      PROJECT: project,
      WANDB_API_KEY: caller.key,
      GATEWAY_PROJECT: `${memberEntity}/sdk`,
    }),
    seedWrites(),
  ])
  ids.sdk = sdk
  await settleAfterResponse()
  await flushUsage()
  const [otelRoot] = await streamCalls({ filter: { trace_roots_only: true }, query: opIs('otel root') })
  if (otelRoot === undefined) throw new Error('the OpenTelemetry trace was not stored')
  ids.otel = { trace: otelRoot.trace_id, root: otelRoot.id }
}

// The metered completions, the upserted roots and the OpenTelemetry trace.
async function seedWrites(): Promise<void> {
  const ref = (name: string) => `weave:///${project}/op/${name}:v1`
  // Metered usage: two projects of the member entity, and the key's own entity (which must never show under it).
  await complete(project, 2)
  await complete(`${memberEntity}/other`, 1)
  await complete(`${keyEntity}/secret`, 3)
  // Older roots first (the Traces page is newest first): enough of them for a second page.
  const base = Date.now() - 3_600_000
  const failedRoot = crypto.randomUUID()
  await upsert(
    [
      ...Array.from({ length: FILLERS }, () => ({ id: crypto.randomUUID(), op: ref('filler') })),
      { id: crypto.randomUUID(), op: 'beta_plain' },
      { id: ids.displayed, op: ref('zeta_op'), display: 'alpha shown' },
      // A root that ended well with a child that failed: its row says descendant_error.
      { id: failedRoot, op: ref('flaky_agent'), summary: { status_counts: { success: 1, error: 1 } } },
      { id: ids.failedChild, op: ref('tool'), parent: failedRoot, exception: 'boom' },
    ],
    base,
  )
  // An OpenTelemetry trace: the root span records nothing, its LLM span 150 tokens of its own.
  const traceId = crypto.randomUUID().replace(/-/g, '')
  const ns = (ms: number) => String(BigInt(ms) * 1_000_000n)
  const now = Date.now()
  const span = (spanId: string, name: string, parent?: string, attributes: object[] = []) => ({
    traceId,
    spanId,
    ...(parent === undefined ? {} : { parentSpanId: parent }),
    name,
    kind: 1,
    startTimeUnixNano: ns(now - 9000),
    endTimeUnixNano: ns(now - 1000),
    attributes,
    status: { code: 1 },
  })
  const llm = [
    { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
    { key: 'gen_ai.usage.input_tokens', value: { intValue: 120 } },
    { key: 'gen_ai.usage.output_tokens', value: { intValue: 30 } },
  ]
  const otlp = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'console-usage' } }] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              span('a1a1a1a1a1a1a1a1', 'otel root'),
              span('b2b2b2b2b2b2b2b2', 'chat gpt-4o', 'a1a1a1a1a1a1a1a1', llm),
            ],
          },
        ],
      },
    ],
  }
  const res = await fetch(`${server.url}/otel/v1/traces`, {
    method: 'POST',
    headers: { ...caller.bearer, project_id: project, 'content-type': 'application/json' },
    body: JSON.stringify(otlp),
  })
  if (res.status !== 200) throw new Error(`otel: ${res.status} ${await res.text()}`)
}

const opIs = (op: string) => ({ $expr: { $eq: [{ $getField: 'op_name' }, { $literal: op }] } })

async function streamCalls(body: Record<string, unknown>): Promise<Json[]> {
  const res = await fetch(`${server.url}/calls/stream_query`, jsonInit({ project_id: project, ...body }, caller.basic))
  if (res.status !== 200) throw new Error(`calls/stream_query: ${res.status} ${await res.text()}`)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}

/** The member entity's project at `page` (`traces`, `usage`), as a link names it. */
function projectHash(page: 'traces' | 'usage'): string {
  const [entity, name] = project.split('/').map(encodeURIComponent)
  return `#/${entity}/${name}/${page}`
}

/**
 * A fresh tab signed in through the page from a link to the member entity's project, the project picked: the link
 * is to its Usage page, whose one report costs the server little (a Traces page reads every root and its usage).
 */
async function signIn(timezoneId?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDE, ...(timezoneId === undefined ? {} : { timezoneId }) })
  const page = await context.newPage()
  await watchPage(page)
  await page.goto(`${server.url}/console/${projectHash('usage')}`)
  await page.getByTestId('signin-key').fill(caller.key)
  await page.getByTestId('signin-submit').click()
  await page.getByTestId('project-picker').selectOption(project)
  await page.getByTestId('project-open').click()
  await page.getByTestId('page-usage').waitFor()
  return page
}

// One signed-in tab per time zone (the host's under ''), shared by the tests: a sign-in is most of a second.
const tabs = new Map<string, Promise<Page>>()

/** The zone's shared tab (the host's zone by default), signed in on first use. */
function tab(timezoneId?: string): Promise<Page> {
  const zone = timezoneId ?? ''
  const shared = tabs.get(zone) ?? signIn(timezoneId)
  tabs.set(zone, shared)
  return shared
}

/** The zone's shared tab showing the member entity's project at `page` as a page mounted anew. */
async function signedIn(page: 'traces' | 'usage', timezoneId?: string): Promise<Page> {
  const signed = await tab(timezoneId)
  await showFresh(signed, projectHash(page))
  return signed
}

/** Waits until every row of the Traces table shows its tokens (no `…` left) and the table is not loading. */
async function rowsSettled(page: Page): Promise<void> {
  await page.locator('[data-testid=traces-table][aria-busy=false]').waitFor()
  await page.waitForFunction(() =>
    [...(globalThis as unknown as PageGlobals).document.querySelectorAll('[data-testid=traces-tokens]')].every(
      (c) => c.textContent !== '…',
    ),
  )
}

async function applyFilters(page: Page, set: { op?: string; status?: string }): Promise<void> {
  await page.getByTestId('filter-op').fill(set.op ?? '')
  await page.getByTestId('filter-status').selectOption(set.status ?? '')
  await page.getByTestId('filter-apply').click()
}

/**
 * The chart's legend for its last bucket (the pointer at the plot's right edge) and the chart's title, once the report
 * the range asked for has `answered` and a chart whose title names `resolution` (`hourly`, `daily`) is drawn from it:
 * the page drops the previous report's chart before it asks, so the chart found is the new one.
 */
async function lastBucket(
  page: Page,
  resolution: string,
  answered: Promise<unknown>,
): Promise<{ legend: string; title: string | null }> {
  await answered
  const chart = page.locator(`[data-testid=usage-chart]:has(canvas[aria-label*="${resolution}"])`)
  const box = await chart.locator('.u-over').boundingBox()
  if (box === null) throw new Error(`The ${resolution} chart has no plot area`)
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2)
  const legend = await page.waitForFunction(() => {
    const { document } = globalThis as unknown as PageGlobals
    const value = document.querySelector('[data-testid=usage-chart] .u-legend .u-series .u-value')?.textContent
    return value !== undefined && value !== null && value !== '—' && value
  })
  return {
    legend: (await legend.jsonValue()) as string,
    title: await chart.locator('canvas').getAttribute('aria-label'),
  }
}

const shownNames = (page: Page) => page.getByTestId('traces-open').allTextContents()

beforeAll(async () => {
  const executable = findChromium()
  if (executable === undefined) throw new Error('No Chromium: vitest.config.ts should have left this file out')
  await putModel(referenceCatalogModel())
  clearCatalogCache()
  // Chromium starts while this process loads the local stack and seeds it.
  const launched = launchChromium(executable).then((b) => {
    browser = b
  })
  caller = await newCaller()
  keyEntity = caller.entity
  memberEntity = `member-${crypto.randomUUID().slice(0, 8)}`
  await addMembership({
    userId: caller.userId,
    entity: memberEntity,
    role: 'member',
    addedAt: new Date().toISOString(),
  })
  project = `${memberEntity}/qa`
  server = await serveApp(await createLocalApp())
  await Promise.all([launched, seed()])
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe('Loom Console figures in Chromium', () => {
  it("reports every project of the open project's entity, not of the key's own entity", async () => {
    // Prepare: what the API reports for the member entity, and for the key's own
    const span = `start=${new Date(Date.now() - 24 * 3_600_000).toISOString()}&end=${new Date().toISOString()}`
    const member = await usageReport(span, { 'OpenAI-Project': project })
    const own = await usageReport(span)
    expect(member.entity).toBe(memberEntity)
    expect(own.entity).toBe(keyEntity)
    expect(member.total.requests).not.toBe(own.total.requests)
    const page = await signedIn('usage')

    // Act
    await page.getByTestId('usage-totals').waitFor()
    await page.getByTestId('usage-scope').selectOption('entity')
    await page.getByTestId('usage-group').selectOption('project')

    // Assess: the member entity's figures, its projects in the table, nothing of the key's entity
    await waitForText(page, 'usage-total-requests', formatCount(member.total.requests))
    expect(await page.getByTestId('usage-total-tokens').textContent()).toBe(formatCount(member.total.total_tokens))
    const table = await page.getByTestId('usage-table').textContent()
    expect(table).toContain(`${memberEntity}/other`)
    expect(table).toContain(project)
    expect(table).not.toContain(keyEntity)
  })

  it('shows the same tokens and cost for a trace in the Traces table and the trace view, each request once', async () => {
    // Prepare: what the gateway served for the SDK trace's two completions (their own project's meter)
    const span = `start=${new Date(Date.now() - 24 * 3_600_000).toISOString()}&end=${new Date().toISOString()}`
    const served = await usageReport(`project=${encodeURIComponent(`${memberEntity}/sdk`)}&${span}`)
    expect(served.total.requests).toBe(2)
    const [sdkRoot] = await streamCalls({ filter: { call_ids: [ids.sdk.root] } })
    // The trace as the SDK recorded it counts each request more than once (the QA's 216 and 540)
    expect(sdkRoot.summary.usage[MODEL].total_tokens).toBeGreaterThan(served.total.total_tokens)
    const page = await signedIn('traces')
    const cases = [
      { trace: ids.sdk, tokens: served.total.total_tokens, requests: 2, model: MODEL },
      { trace: ids.otel, tokens: 150, requests: 0, model: 'gpt-4o' },
    ]

    for (const [i, c] of cases.entries()) {
      // Act: the row (back on the Traces page after the first trace), then its trace
      if (i > 0) await page.getByTestId('nav-traces').click()
      await rowsSettled(page)
      const row = page.locator(`[data-testid=traces-row][data-call-id="${c.trace.root}"]`)
      const rowTokens = await row.getByTestId('traces-tokens').textContent()
      const rowCost = await row.getByTestId('traces-cost').getAttribute('title')
      await row.getByTestId('traces-open').click()
      await page.getByTestId('trace-usage-row').first().waitFor()
      const cells = await page.getByTestId('trace-usage-row').locator('td').allTextContents()
      const viewCost = await page.getByTestId('trace-usage-row').locator('td').last().getAttribute('title')

      // Assess: one figure, the requests served
      expect(rowTokens).toBe(formatTokens(c.tokens))
      expect(cells[0]).toBe(c.model)
      expect(cells[1]).toBe(formatCount(c.requests))
      expect(cells.at(-2)).toBe(formatTokens(c.tokens))
      expect(viewCost).toBe(rowCost)
    }
  })

  it('labels day buckets as UTC days and hour buckets in the browser zone, from a zone behind UTC', async () => {
    // Prepare
    const page = await signedIn('usage', ZONE)
    await page.getByTestId('usage-totals').waitFor()
    const report = () => page.waitForResponse((r) => r.url().includes('/v1/usage?'))

    // Act: daily buckets, the last one (today, UTC)
    const week = report()
    await page.getByTestId('usage-resolution').selectOption('day')
    await page.getByTestId('usage-range').selectOption('7d')
    const day = await lastBucket(page, 'daily', week)

    // Assess: the UTC date, as the table's Day (UTC) column shows it, never the local time of UTC midnight
    const today = new Date().toISOString().slice(0, 10)
    const before = new Date(Date.now() - 120_000).toISOString().slice(0, 10)
    expect([today, before]).toContain(day.legend)
    expect(day.title).toContain('daily (UTC)')

    // Act: hourly buckets, the last one
    const asked = report()
    await page.getByTestId('usage-resolution').selectOption('hour')
    await page.getByTestId('usage-range').selectOption('24h')
    const hour = await lastBucket(page, 'hourly', asked)

    // Assess: 24 hour buckets asked for (`start` on the hour, `end` exclusive), the last one in progress
    const window = new URL((await asked).url()).searchParams
    const [start, end] = [Date.parse(window.get('start') ?? ''), Date.parse(window.get('end') ?? '')]
    expect(Math.ceil(end / 3_600_000) - start / 3_600_000).toBe(24)
    // Assess: the hour in the browser's zone, as the table's Hour column shows it
    const thisHour = Math.floor(Date.now() / 3_600_000) * 3_600_000
    const shown = [thisHour, thisHour - 3_600_000].map((t) => formatDate(t, ZONE))
    expect(shown).toContain(hour.legend)
    expect(hour.title).toContain(`hourly (${ZONE})`)
    expect(await page.getByTestId('usage-time-column').textContent()).toBe(`Hour (${ZONE})`)
  })

  it('counts the total once per selection: paging and sorting send no query_stats', async () => {
    // Prepare
    const page = await signedIn('traces')
    const counts: Request[] = []
    const record = (r: Request) => {
      if (r.url().endsWith('/calls/query_stats')) counts.push(r)
    }
    page.on('request', record)
    // The first total is shown once its query_stats has answered, so that request is in `counts` by now.
    await page.getByTestId('traces-total').filter({ hasText: /\d/ }).waitFor()
    await rowsSettled(page)
    const before = counts.length

    // Act: next page, back, and three sorts
    await page.getByTestId('page-next').click()
    await page.getByTestId('page-range').filter({ hasText: /^51–/ }).waitFor()
    await rowsSettled(page)
    await page.getByTestId('page-prev').click()
    await page
      .getByTestId('page-range')
      .filter({ hasText: /^1–50 / })
      .waitFor()
    await rowsSettled(page)
    for (const column of ['latency', 'tokens', 'op']) {
      await page.getByTestId(`sort-${column}`).click()
      await page.locator(`th[aria-sort=descending] [data-testid=sort-${column}]`).waitFor()
      await rowsSettled(page)
    }

    // Assess: no count for the same selection (one asked late, after a page's rows, is still counted below: the new
    // selection's own total comes three round trips after the last sort's rows)
    expect(counts.length - before).toBe(0)

    // Act: a new selection
    const successes = await post('calls/query_stats', callsStatsRequest(project, { ...ROOTS, status: 'success' }))
    await applyFilters(page, { status: 'success' })
    await waitForText(page, 'traces-total', `${formatTotal(successes)} ${plural(successes.count, 'trace')}`)

    // Assess: counted once
    expect(counts.length - before).toBe(1)
    page.off('request', record)
  })

  it('keeps filters, order and page in the address: Back from a trace and the link in a fresh tab show the same list', async () => {
    // Prepare: successful roots started since 2000, oldest first, the second page
    const page = await signedIn('traces')
    await page.getByTestId('filter-from').fill('2000-01-01T00:00')
    await applyFilters(page, { status: 'success' })
    await page.getByTestId('sort-started').click()
    await page.locator('th[aria-sort=ascending] [data-testid=sort-started]').waitFor()
    await page.getByTestId('page-next').click()
    await page.getByTestId('page-range').filter({ hasText: /^51–/ }).waitFor()
    await rowsSettled(page)
    const rowIds = () =>
      page.getByTestId('traces-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-call-id')))
    const listed = await rowIds()
    const link = page.url()

    // Act: a trace of that page, then Back
    await page.getByTestId('traces-open').first().click()
    await page.getByTestId('page-trace').waitFor()
    await page.goBack()
    await page.getByTestId('page-range').filter({ hasText: /^51–/ }).waitFor()
    await rowsSettled(page)

    // Assess: the same address, form, order and rows
    const [entity, name] = project.split('/').map(encodeURIComponent)
    expect(new URL(link).hash).toBe(
      `#/${entity}/${name}/traces?status=success&from=2000-01-01T00%3A00&dir=asc&offset=50`,
    )
    expect(page.url()).toBe(link)
    expect(await page.getByTestId('filter-status').inputValue()).toBe('success')
    expect(await page.getByTestId('filter-from').inputValue()).toBe('2000-01-01T00:00')
    expect(await page.locator('th[aria-sort=ascending]').textContent()).toContain('Started')
    expect(listed.length).toBeGreaterThan(0)
    expect(await rowIds()).toEqual(listed)

    // Act: the link in a fresh tab, signed in there with the picker as it opens
    const fresh = await (await browser.newContext({ viewport: WIDE })).newPage()
    await fresh.goto(link)
    await fresh.getByTestId('signin-key').fill(caller.key)
    await fresh.getByTestId('signin-submit').click()
    await fresh.getByTestId('project-picker').waitFor()
    await fresh.getByTestId('project-open').click()
    await fresh.getByTestId('page-range').filter({ hasText: /^51–/ }).waitFor()
    await rowsSettled(fresh)

    // Assess
    expect(fresh.url()).toBe(link)
    expect(await fresh.getByTestId('filter-status').inputValue()).toBe('success')
    expect(await fresh.getByTestId('filter-from').inputValue()).toBe('2000-01-01T00:00')
    expect(await fresh.locator('th[aria-sort=ascending]').textContent()).toContain('Started')
    expect(
      await fresh.getByTestId('traces-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-call-id'))),
    ).toEqual(listed)
    await fresh.context().close()
  })

  it('keeps a date typed into the form before the page has painted: only a new route fills the form anew', async () => {
    // Prepare: a tab on the Sign in page, and a watcher that types into From as soon as the form is in the document (in
    // the render's own task, before the effects Preact runs after paint)
    const page = await tab()
    await page.evaluate("location.replace('#/signin')")
    await page.getByTestId('page-signin').waitFor()
    const typed = '2000-01-01T00:00'

    // Act: open Traces with the watcher in place
    await page.evaluate(
      `(() => {
        const observer = new MutationObserver(() => {
          const input = document.querySelector('[data-testid=filter-from]')
          if (input === null) return
          observer.disconnect()
          input.value = ${JSON.stringify(typed)}
          input.dispatchEvent(new Event('input', { bubbles: true }))
        })
        observer.observe(document.body, { childList: true, subtree: true })
        location.hash = ${JSON.stringify(projectHash('traces'))}
      })()`,
    )
    await rowsSettled(page)

    // Assess: the page's first rows are in (its mount effects have run long since), and the typed date is still there
    expect(await page.getByTestId('filter-from').inputValue()).toBe(typed)
  })

  it('keeps both of two inputs into the Traces form in one task (as autofill sends them)', async () => {
    // Prepare
    const page = await signedIn('traces')
    await rowsSettled(page)

    // Act: the op name and the search text, typed in the same task, before the form renders again
    await page.evaluate(
      `(() => {
        for (const [id, value] of [['filter-op', 'alpha'], ['filter-text', 'shown']]) {
          const input = document.querySelector('[data-testid=' + id + ']')
          input.value = value
          input.dispatchEvent(new Event('input', { bubbles: true }))
        }
      })()`,
    )
    await page.getByTestId('filter-apply').click()

    // Assess: both are in the form and in the filters applied
    expect(await page.getByTestId('filter-op').inputValue()).toBe('alpha')
    expect(await page.getByTestId('filter-text').inputValue()).toBe('shown')
    await expect.poll(() => page.evaluate('location.hash')).toBe(`${projectHash('traces')}?op=alpha&q=shown`)
  })

  it("keeps both of two picks when the second comes before the browser's hashchange for the first", async () => {
    // Prepare
    const page = await signedIn('usage')
    await page.getByTestId('usage-totals').waitFor()

    // Act: the range, then the stacking, with only microtasks between them (the page's renders run in those; the
    // hashchange, a task of its own, comes after both, as it does when the second pick's input was queued before it)
    const hash = await page.evaluate(
      `(async () => {
        const pick = (id, value) => {
          const select = document.querySelector('[data-testid=' + id + ']')
          select.value = value
          select.dispatchEvent(new Event('change', { bubbles: true }))
        }
        pick('usage-range', '7d')
        for (let i = 0; i < 10; i++) await Promise.resolve()
        pick('usage-group', 'project')
        return location.hash
      })()`,
    )

    // Assess: the second pick built on the first
    expect(hash).toBe(`${projectHash('usage')}?range=7d&group=project`)
  })

  it('marks the table busy from the render that shows the next page, not only once its request is sent', async () => {
    // Prepare: a watcher that reads the table's state in the render that first shows the next page's range (before
    // the effects Preact runs after paint)
    const page = await signedIn('traces')
    await rowsSettled(page)
    await page.evaluate(
      `(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('[data-testid=page-range]')?.textContent?.startsWith('51–')) return
          observer.disconnect()
          window.__busyAtNext = document.querySelector('[data-testid=traces-table]')?.getAttribute('aria-busy')
        })
        observer.observe(document.body, { childList: true, subtree: true, characterData: true })
      })()`,
    )

    // Act
    await page.getByTestId('page-next').click()
    await page.getByTestId('page-range').filter({ hasText: /^51–/ }).waitFor()

    // Assess: busy while the first page's rows are still shown, so waiting for a settled table waits for the new rows
    expect(await page.evaluate('window.__busyAtNext')).toBe('true')
  })

  it('offers the first page for a link past the last row, and says no call matches only for a filter', async () => {
    // Prepare: the roots' total, and the last page with rows
    const roots = await post('calls/query_stats', callsStatsRequest(project, ROOTS))
    const last = Math.floor((roots.count - 1) / 50) * 50
    expect(last).toBeGreaterThan(0)
    const page = await tab()

    // Act: a link to a page far past the last root (made before calls were deleted, or typed)
    await showFresh(page, `${projectHash('traces')}?offset=5000`)

    // Assess: an empty page, not an empty filter, with the total and a way to the first page
    await page.getByTestId('traces-first-page').waitFor()
    await waitForText(page, 'traces-total', `${formatTotal(roots)} ${plural(roots.count, 'trace')}`)
    const empty = await page.getByTestId('traces-empty').textContent()
    expect(empty).toContain('No traces on this page')
    expect(empty).not.toContain('No calls match these filters')

    // Act: Previous goes to the last page with rows, not one page back (still past the end)
    await page.getByTestId('page-prev').click()

    // Assess
    await waitForCount(page, 'traces-row', roots.count - last)
    expect(new URL(page.url()).hash).toBe(`${projectHash('traces')}?offset=${last}`)

    // Act: the link again, then the first page
    await showFresh(page, `${projectHash('traces')}?offset=5000`)
    await page.getByTestId('traces-first-page').click()

    // Assess
    await waitForCount(page, 'traces-row', 50)
    expect(new URL(page.url()).hash).toBe(projectHash('traces'))

    // Act: a filter nothing matches, on the first page
    await applyFilters(page, { op: memberEntity })

    // Assess
    await waitForText(page, 'traces-empty', 'No calls match these filters.')
    expect(await page.getByTestId('traces-first-page').count()).toBe(0)
  })

  it('filters on every status a row shows, descendant_error included', async () => {
    // Prepare
    const page = await signedIn('traces')
    await rowsSettled(page)

    // Act
    await applyFilters(page, { status: 'descendant_error' })

    // Assess: the root whose child failed, and only such rows
    await waitForCount(page, 'traces-row', 1)
    expect(await page.getByTestId('traces-status').allTextContents()).toEqual(['descendant_error'])
    expect(await shownNames(page)).toEqual(['flaky_agent'])
  })

  it('filters and sorts by the name a row shows, not the hidden op ref', async () => {
    // Prepare
    const page = await signedIn('traces')
    await rowsSettled(page)

    // Act: the entity's name is in every Weave op's ref, never in a shown name
    await applyFilters(page, { op: memberEntity })

    // Assess
    await page.getByTestId('traces-empty').waitFor()

    // Act: part of a display name (its op ref says zeta_op)
    await applyFilters(page, { op: 'ALPHA' })

    // Assess
    await waitForCount(page, 'traces-row', 1)
    expect(await page.getByTestId('traces-row').getAttribute('data-call-id')).toBe(ids.displayed)

    // Act: every root, sorted by name (plain OpenTelemetry and gateway names beside Weave refs)
    await applyFilters(page, {})
    await waitForCount(page, 'traces-row', 50)
    await page.getByTestId('sort-op').click()
    await page.locator('th[aria-sort=descending] [data-testid=sort-op]').waitFor()
    await page.getByTestId('sort-op').click()
    await page.locator('th[aria-sort=ascending] [data-testid=sort-op]').waitFor()

    // Assess: in the order of the names shown, once the sorted page is in
    const sorted = async () => {
      const names = await shownNames(page)
      return names.length === 50 && names.join('\n') === [...names].sort().join('\n') ? names.slice(0, 2) : names
    }
    await expect.poll(sorted, { timeout: 10_000 }).toEqual(['alpha shown', 'beta_plain'])
  })

  it('names the time zone of the times it shows', async () => {
    // Prepare
    const page = await signedIn('traces', ZONE)
    await rowsSettled(page)

    // Act
    await page.locator(`[data-call-id="${ids.sdk.root}"] [data-testid=traces-open]`).click()
    await page.getByTestId('call-detail-started').waitFor()

    // Assess
    const [root] = await streamCalls({ filter: { call_ids: [ids.sdk.root] } })
    expect(await page.getByTestId('call-detail-started').textContent()).toBe(
      `${formatDate(root.started_at, ZONE)} (${ZONE})`,
    )
    await page.getByTestId('nav-traces').click()
    expect(await page.getByTestId('sort-started').textContent()).toContain(`Started (${ZONE})`)
  })

  it('says the server could not be reached, for which path, and links to sign in again when the key is refused', async () => {
    // Prepare
    const page = await tab()
    await page.route('**/v1/usage?*', (route) => route.abort('failed'))

    // Act
    await showFresh(page, projectHash('usage'))

    // Assess
    await page.getByTestId('usage-error').waitFor()
    expect(await page.getByTestId('usage-error').textContent()).toContain(
      `Could not reach the server at ${server.url} for v1/usage`,
    )

    // Act: the key is refused (as after it was revoked)
    await page.unroute('**/v1/usage?*')
    await page.route('**/v1/usage?*', (route) =>
      route.fulfill({
        status: 401,
        contentType: 'application/json',
        body: JSON.stringify({ error: { message: 'Authentication failed', type: 'AuthenticationError' } }),
      }),
    )
    await page.getByTestId('usage-range').selectOption('7d')

    // Assess: what happened, and a link to sign in again that comes back here
    await page.getByTestId('usage-error').filter({ hasText: 'sign in again' }).waitFor()
    expect(await page.getByTestId('usage-error').textContent()).toBe(
      'Could not read the usage report (HTTP 401): Authentication failed. The key was refused (revoked, expired or mistyped): sign in again with a valid key. Sign in again',
    )
    const usageHash = new URL(page.url()).hash
    const again = page.getByTestId('usage-error').getByTestId('sign-in-again')
    expect(await again.getAttribute('href')).toBe(`#/signin?${new URLSearchParams({ next: usageHash })}`)

    // Act: sign in again (a valid key now), the picker as it opens
    await page.unroute('**/v1/usage?*')
    await again.click()
    await page.getByTestId('signin-key').fill(caller.key)
    await page.getByTestId('signin-submit').click()
    await page.getByTestId('project-picker').waitFor()
    await page.getByTestId('project-open').click()

    // Assess: back on the page the key was refused on, which now answers
    await page.getByTestId('usage-totals').waitFor()
    expect(new URL(page.url()).hash).toBe(usageHash)
    expect(await page.getByTestId('usage-error').count()).toBe(0)
  })

  it('says a mistyped key on the Sign in page was refused, in words, with no link to the page already shown', async () => {
    // Prepare: a fresh tab at the console's address (the sign-in form shows, signed out, at the Traces route)
    const context = await browser.newContext({ viewport: WIDE })
    const page = await context.newPage()
    await page.goto(`${server.url}/console/`)

    // Act
    await page.getByTestId('signin-key').fill(`${caller.key}-mistyped`)
    await page.getByTestId('signin-submit').click()

    // Assess: what failed and what to do, no path, no "Sign in again" link to the form above
    await page.getByTestId('signin-error').waitFor()
    expect(await page.getByTestId('signin-error').textContent()).toBe(
      "Could not list this key's projects (HTTP 401): Authentication failed. The key was refused (revoked, expired or mistyped): sign in again with a valid key.",
    )
    expect(await page.getByTestId('sign-in-again').count()).toBe(0)

    // Act + Assess: the same at the Sign in route, as a refused key's link opens it, in another tab
    const linked = await context.newPage()
    await linked.goto(`${server.url}/console/#/signin?${new URLSearchParams({ next: projectHash('usage') })}`)
    await linked.getByTestId('signin-key').fill(`${caller.key}-mistyped`)
    await linked.getByTestId('signin-submit').click()
    await linked.getByTestId('signin-error').waitFor()
    expect(await linked.getByTestId('sign-in-again').count()).toBe(0)
    await context.close()
  })
})
