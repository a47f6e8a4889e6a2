import OpenAI from 'openai'
import type { Browser, BrowserContext, Page, Request, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app as createModelApp } from '#functions/training/create-preview-model/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { settleAfterResponse } from '#shared/http/after-response'
import { clearCatalogCache } from '#shared/inference/catalog'
import { flushUsage } from '#shared/inference/usage-meter'
import {
  type Call,
  type CallFilters,
  callName,
  callsPageRequest,
  callsStatsRequest,
  totalCost,
} from '../../console/src/lib/calls.js'
import {
  formatCost,
  formatCount,
  formatDate,
  formatNumber,
  formatTokens,
  formatTotal,
  plural,
} from '../../console/src/lib/format.js'
import { columnsOf, compactValue } from '../../console/src/lib/table-rows.js'
import { createLocalApp } from '../../scripts/local/app.js'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { findChromium } from '../support/chromium.js'
import {
  launchChromium,
  NARROW,
  resizeTo,
  screenshot,
  seriousAxeViolations,
  sidewaysOverflow,
  storedInTab,
  WIDE,
  waitForCount,
  waitForText,
  waitForTextContaining,
  watchPage,
  xssTraces,
} from '../support/console-browser.js'
import { seedFeedback } from '../support/feedback.js'
import { addCalls, newQueue } from '../support/queues.js'
import { newModel, trajectory } from '../support/training.js'
import { runWeaveScript, serveApp, type TracingServer } from '../support/weave-sdk.js'

// The Loom Console in a real Chromium (Debian's, driven by playwright-core) against the whole local stack in this
// process: data written by the weave and openai SDKs, a training log and an annotation queue; each page's figures are
// checked against the API's own answers. vitest.config.ts leaves this file out, with one line saying so, when no
// Chromium is found.

const XSS = ['<img src=x onerror="window.__xss=1">', '<script>window.__xss=1</script>'] as const

// Nested ops with payloads in inputs, outputs, a display name, feedback and object values.
const SCRIPT = `
const weave = require(process.env.WEAVE_PATH)
const XSS = JSON.parse(process.env.XSS)
const ids = {}
const here = () => weave.requireCurrentCallStackEntry()
;(async () => {
  const client = await weave.init(process.env.PROJECT)
  const lookup = weave.op(async function lookup(query) {
    ids.lookup = here().callId
    return { found: XSS[1] + ' for ' + query }
  }, { name: 'lookup' })
  const agent = weave.op(async function agent(question) {
    ids.agent = here().callId
    ids.trace = here().traceId
    const first = await lookup(question)
    const second = await lookup('more')
    return { answer: XSS[0], first, second }
  }, { name: 'agent' })
  const judge = weave.op(async function judge(answer) {
    ids.judge = here().callId
    return { verdict: XSS[0], score: 0.75 }
  }, { name: 'judge' })
  const result = await agent(XSS[0])
  const verdict = await judge(result.answer)
  const judgeRef = await client.publish(judge)
  await client.addScore(ids.agent, ids.judge, judgeRef.uri(), verdict)
  await client.publish({ note: XSS[1], temperature: 0.5 }, 'settings')
  await client.publish({ note: XSS[0], temperature: 0.25 }, 'settings')
  // A Dataset of 60 rows (its value refers to a table of them): a long value and a key only one row has.
  const rows = Array.from({ length: 60 }, (_, i) => ({ question: 'q' + i, expected: { answer: i, tags: ['t' + (i % 3)] } }))
  rows[0].context = XSS[0] + ' ' + 'long '.repeat(100)
  rows[1].note = XSS[1]
  await new weave.Dataset({ name: 'questions', rows }).save()
  await client.waitForBatchProcessing()
  await client.updateCall(ids.lookup, XSS[1])
  process.stdout.write(JSON.stringify({ ids }) + '\\n')
  process.exit(0)
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1) })
`

type SdkRun = { ids: { agent: string; lookup: string; judge: string; trace: string } }
// biome-ignore lint/suspicious/noExplicitAny: API answers are checked field by field by the assertions.
type Json = any
// The page's `getComputedStyle`, typed by hand: the root tsconfig has no DOM library.
type StyledWindow = { getComputedStyle: (el: unknown) => { borderBottomStyle: string; whiteSpace: string } }

// Seeded `rating` feedback: more than one page of the Feedback table (25 a page).
const RATINGS = 30
const objectRef = () => `weave:///${project}/object/settings:latest`

const ROOTS_ONLY: CallFilters = { op: '', status: '', from: '', to: '', text: '', rootsOnly: true }
const MODEL = 'loom/reference-1'

let server: TracingServer
let caller: TestCaller
let project: string
let run: SdkRun
let completionCall: Call
let xssCallId: string
let queueId: string
let browser: Browser
let context: BrowserContext
let page: Page
let watched: { errors: string[] }
const requestUrls: string[] = []

async function post(path: string, body: Record<string, unknown>): Promise<Json> {
  const res = await fetch(`${server.url}/${path}`, jsonInit({ project_id: project, ...body }, caller.basic))
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

async function streamCalls(body: Record<string, unknown>): Promise<Call[]> {
  const res = await fetch(`${server.url}/calls/stream_query`, jsonInit(body, caller.basic))
  if (res.status !== 200) throw new Error(`calls/stream_query: ${res.status} ${await res.text()}`)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Call)
}

async function getV1(path: string): Promise<Json> {
  const res = await fetch(`${server.url}/v1/${path}`, { headers: caller.bearer })
  if (res.status !== 200) throw new Error(`v1/${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

async function seed(): Promise<void> {
  run = await runWeaveScript<SdkRun>(SCRIPT, server, {
    PROJECT: project,
    WANDB_API_KEY: caller.key,
    XSS: JSON.stringify(XSS),
  })
  // A call whose op name is itself a payload (OpenTelemetry and other clients send plain names).
  xssCallId = crypto.randomUUID()
  await post('call/start', {
    start: {
      project_id: project,
      id: xssCallId,
      op_name: XSS[1],
      started_at: new Date().toISOString(),
      attributes: {},
      inputs: {},
    },
  })
  // Completions through Loom's gateway on the reference model: metered and traced in the project.
  await post('cost/create', { costs: { [MODEL]: { prompt_token_cost: 0.001, completion_token_cost: 0.002 } } })
  const openai = new OpenAI({ apiKey: caller.key, baseURL: `${server.url}/v1`, project, maxRetries: 0 })
  for (const content of ['Say hello to the console', 'And once more']) {
    await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content }], max_tokens: 12 })
  }
  await settleAfterResponse()
  await flushUsage()
  const [completion] = await streamCalls({ project_id: project, filter: { op_names: ['loom.chat.completions'] } })
  if (completion === undefined) throw new Error('the completions were not traced')
  completionCall = completion
  // Two logs of one model: both at step 0, as Loom does not train (docs/training.md §5.1).
  const model = await newModel(caller, project.split('/')[1])
  for (const rewards of [
    [0.2, 0.4],
    [0.6, 0.9],
  ]) {
    const body = {
      model_id: model.id,
      split: 'train',
      trajectory_groups: [{ trajectories: rewards.map((r) => trajectory(r, { correct: r > 0.5 })), exceptions: [] }],
    }
    const res = await fetch(`${server.url}/v1/preview/models/${model.id}/log`, jsonInit(body, caller.bearer))
    if (res.status !== 200) throw new Error(`training log: ${res.status} ${await res.text()}`)
  }
  // An annotation queue over the agent's and a completion's calls.
  queueId = await newQueue({ ...caller, project }, 'review')
  await addCalls({ ...caller, project }, queueId, [run.ids.agent, completionCall.id])
  // Ratings, one a minute over the last half hour, by three users, on three calls (not the agent, whose feedback the
  // trace view test counts) and one on an object: two pages of the Feedback table. Stored at chosen times through the
  // repository (the API stamps "now").
  const targets = [run.ids.lookup, run.ids.judge, xssCallId]
  const now = Date.now()
  for (let i = 0; i < RATINGS; i++) {
    await seedFeedback(
      project,
      new Date(now - (RATINGS - i) * 60_000).toISOString(),
      { score: i, comment: i === RATINGS - 1 ? XSS[1] : `rating ${i}` },
      {
        feedback_type: 'rating',
        weave_ref: i === 3 ? objectRef() : `weave:///${project}/call/${targets[i % targets.length]}`,
        wb_user_id: `rater-${i % 3}`,
      },
    )
  }
}

async function signIn(): Promise<void> {
  await page.goto(`${server.url}/console/`)
  await page.getByTestId('signin-key').fill(caller.key)
  await page.getByTestId('signin-submit').click()
  await page.getByTestId('project-picker').selectOption(project)
  await page.getByTestId('project-open').click()
  await page.getByTestId('page-traces').waitFor()
}

/** The checks every page gets: XSS traces, axe, screenshots at 1280 and 390 px, no sideways scroll when narrow. */
async function checkPage(name: string): Promise<void> {
  const traces = await xssTraces(page)
  expect(traces).toEqual({ flag: undefined, injected: 0, csp: [] })
  expect(watched.errors).toEqual([])
  await screenshot(page, name)
  expect(await seriousAxeViolations(page)).toEqual([])
  await resizeTo(page, NARROW)
  try {
    expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
    await screenshot(page, `${name}-390`)
  } finally {
    await resizeTo(page, WIDE)
  }
}

async function open(nav: string, root: string): Promise<void> {
  await page.getByTestId(`nav-${nav}`).click()
  await page.getByTestId(root).waitFor()
}

beforeAll(async () => {
  const executable = findChromium()
  if (executable === undefined) throw new Error('No Chromium: vitest.config.ts should have left this file out')
  await putModel(referenceCatalogModel())
  clearCatalogCache()
  caller = await newCaller()
  project = `${caller.entity}/console`
  server = await serveApp(await createLocalApp())
  const [launched] = await Promise.all([launchChromium(executable), seed()])
  browser = launched
  context = await browser.newContext({ viewport: WIDE })
  page = await context.newPage()
  watched = await watchPage(page)
  page.on('request', (r) => requestUrls.push(r.url()))
  await signIn()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe('Loom Console in Chromium', () => {
  it('lists the newest root calls with the total of calls/query_stats, payloads as text', async () => {
    // Prepare
    const stats = await post('calls/query_stats', callsStatsRequest(project, ROOTS_ONLY))
    const sort = { column: 'started', direction: 'desc' } as const
    const newest = await streamCalls(callsPageRequest(project, ROOTS_ONLY, sort, { offset: 0, limit: 50 }))

    // Act
    await open('traces', 'page-traces')
    await waitForText(page, 'traces-total', `${formatTotal(stats)} ${plural(stats.count, 'trace')}`)
    await waitForCount(page, 'traces-row', newest.length)

    // Assess
    const ids = await page
      .getByTestId('traces-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-call-id')))
    expect(ids).toEqual(newest.map((c) => c.id))
    expect(ids).toEqual(expect.arrayContaining([run.ids.agent, run.ids.judge, completionCall.id, xssCallId]))
    expect(await page.locator(`[data-call-id="${xssCallId}"] [data-testid=traces-open]`).textContent()).toBe(XSS[1])
    // Tokens and cost of a traced completion equal its trace/usage roll-up.
    const usage = (await post('trace/usage', { filter: { trace_ids: [completionCall.trace_id] }, include_costs: true }))
      .call_usage[completionCall.id][MODEL]
    const row = page.locator(`[data-call-id="${completionCall.id}"]`)
    expect(await row.getByTestId('traces-tokens').textContent()).toBe(formatTokens(usage.total_tokens))
    const cost = usage.prompt_tokens_total_cost + usage.completion_tokens_total_cost
    expect(Number(await row.getByTestId('traces-cost').getAttribute('title'))).toBeCloseTo(cost, 12)
    expect(totalCost(usage)).toBeCloseTo(cost, 12)
    await checkPage('traces')
  })

  it('shows a trace: every call in the tree, the selected call as text, its feedback', async () => {
    // Prepare
    const calls = await streamCalls({ project_id: project, filter: { trace_ids: [run.ids.trace] } })
    const feedback = await post('feedback/query', {
      query: {
        $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: `weave:///${project}/call/${run.ids.agent}` }] },
      },
    })

    // Act
    await open('traces', 'page-traces')
    await page.locator(`[data-call-id="${run.ids.agent}"] [data-testid=traces-open]`).click()
    await page.getByTestId('page-trace').waitFor()

    // Assess
    await page.locator(`[data-testid=trace-tree][data-row-count="${calls.length}"]`).waitFor()
    await waitForCount(page, 'trace-tree-row', calls.length)
    await waitForText(page, 'call-detail-name', 'agent')
    expect(await page.getByTestId('call-detail-status').textContent()).toBe('success')
    expect(await page.getByTestId('json-inputs').textContent()).toContain(XSS[0])
    expect(await page.getByTestId('json-output').textContent()).toContain(XSS[1])
    await waitForCount(page, 'call-feedback-item', feedback.result.length)
    await page.locator('[data-testid=json-feedback] .json-toggle[aria-expanded=false]').first().click()
    expect(await page.getByTestId('json-feedback').textContent()).toContain(XSS[0])
    // The feedback list's rule draws a line under each feedback, not under each row of the JSON viewer inside it.
    const border = (el: unknown) => (globalThis as unknown as StyledWindow).getComputedStyle(el).borderBottomStyle
    expect(await page.getByTestId('call-feedback-item').first().evaluate(border)).toBe('solid')
    expect(await page.locator('[data-testid=json-feedback] li').first().evaluate(border)).toBe('none')
    expect(
      await page.locator(`[data-testid=trace-tree-row][data-call-id="${run.ids.lookup}"]`).textContent(),
    ).toContain(XSS[1])
    expect(page.url()).toContain(`call=${run.ids.agent}`)
    await checkPage('trace')
  })

  it('draws a 600-call trace from its first page, then every page, children that came first under their parent', async () => {
    // Prepare: a 4-ary tree of 600 calls with random ids, so the pages (in id order) bring children before parents
    const traceId = crypto.randomUUID()
    const base = Date.parse('2025-03-01T00:00:00Z')
    const calls = Array.from({ length: 600 }, (_, i) => ({ id: crypto.randomUUID(), at: base + i * 10, i }))
    const parentOf = (i: number) => (i === 0 ? undefined : calls[Math.floor((i - 1) / 4)])
    for (let i = 0; i < calls.length; i += 200) {
      const batch = calls.slice(i, i + 200).flatMap((c) => [
        {
          mode: 'start',
          req: {
            start: {
              project_id: project,
              id: c.id,
              trace_id: traceId,
              ...(parentOf(c.i) === undefined ? {} : { parent_id: parentOf(c.i)?.id }),
              op_name: `step_${c.i % 5}`,
              started_at: new Date(c.at).toISOString(),
              attributes: {},
              inputs: { i: c.i },
            },
          },
        },
        {
          mode: 'end',
          req: { end: { project_id: project, id: c.id, ended_at: new Date(c.at + 5).toISOString(), summary: {} } },
        },
      ])
      const res = await fetch(`${server.url}/call/upsert_batch`, jsonInit({ batch }, caller.basic))
      if (res.status !== 200) throw new Error(`upsert_batch: ${res.status} ${await res.text()}`)
    }
    // Depth-first, siblings by start time: the rows the tree shows once everything is in.
    const children = new Map<string, typeof calls>()
    for (const c of calls.slice(1)) {
      const parent = parentOf(c.i)?.id as string
      children.set(parent, [...(children.get(parent) ?? []), c])
    }
    const expected: string[] = []
    const walk = (c: (typeof calls)[number], depth: number) => {
      expected.push(`${c.id} ${depth + 1}`)
      for (const child of children.get(c.id) ?? []) walk(child, depth + 1)
    }
    walk(calls[0] as (typeof calls)[number], 0)
    // Pages after the first wait until the first page has been checked.
    const pages: { limit: number; after: boolean }[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    await page.route('**/calls/stream_query', async (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}')
      if (body.filter?.trace_ids?.[0] === traceId) {
        pages.push({ limit: body.limit, after: body.query !== undefined })
        if (body.query !== undefined) await held
      }
      await route.continue()
    })

    try {
      // Act: the first page alone
      await page.evaluate(`location.hash = ${JSON.stringify(`#/trace/${traceId}`)}`)
      await page.locator('[data-testid=trace-tree][data-row-count="100"]').waitFor()

      // Assess: its 100 calls are drawn and usable while the rest is held back
      expect(await page.getByTestId('trace-meta').textContent()).toContain('100 calls (loading…)')
      expect(await page.getByTestId('trace-tree-row').count()).toBeGreaterThan(10)
      // The second page's request is sent as the first page is drawn, but its route reaches this process on its own
      // channel, maybe after the drawn rows were seen.
      await expect
        .poll(() => pages)
        .toEqual([
          { limit: 100, after: false },
          { limit: 500, after: true },
        ])

      // Act: the other pages
      release()
      await page.locator('[data-testid=trace-tree][data-row-count="600"]').waitFor()
      await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()

      // Assess: every call once, in depth-first order at its depth, none left waiting for a parent
      const shown: string[] = []
      for (let top = 0; top < 600 * 28; top += 280) {
        await page.getByTestId('trace-tree').evaluate((el, y) => {
          ;(el as unknown as { scrollTop: number }).scrollTop = y
        }, top)
        await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
        const rows: string[] = await page
          .getByTestId('trace-tree-row')
          .evaluateAll((els) =>
            els.map((r) => `${r.getAttribute('data-call-id')} ${/level (\d+)/.exec(r.textContent ?? '')?.[1]}`),
          )
        for (const row of rows) if (!shown.includes(row)) shown.push(row)
      }
      expect(shown).toEqual(expected)
      expect(await page.getByTestId('page-trace').textContent()).not.toContain('parent not loaded')
      expect(pages.map((p) => p.limit)).toEqual([100, 500, 1000])
      await waitForTextContaining(page, 'trace-usage', 'No LLM usage recorded in this trace.')
      expect(watched.errors).toEqual([])
    } finally {
      release()
      await page.unroute('**/calls/stream_query')
    }
  })

  it('marks the total as counting while a new selection is counted, Next usable from the page length', async () => {
    // Prepare: every call, not only roots (the 600-call trace above makes more than a page); query_stats held back
    const everyCall = { ...ROOTS_ONLY, rootsOnly: false }
    const roots = await post('calls/query_stats', callsStatsRequest(project, ROOTS_ONLY))
    const stats = await post('calls/query_stats', callsStatsRequest(project, everyCall))
    await open('traces', 'page-traces')
    await waitForText(page, 'traces-total', `${formatTotal(roots)} ${plural(roots.count, 'trace')}`)
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    await page.route('**/calls/query_stats', async (route) => {
      await held
      await route.continue()
    })

    try {
      // Act: the new selection's page arrives, its total does not
      await page.getByTestId('filter-roots').uncheck()
      await page.getByTestId('filter-apply').click()
      await waitForCount(page, 'traces-row', 50)

      // Assess: no total of the roots is shown for every call, and Next goes by the full page
      await waitForText(page, 'page-range', '1–50 of …')
      expect(await page.getByTestId('traces-total').textContent()).toBe('counting…')
      expect(await page.getByTestId('page-next').isEnabled()).toBe(true)

      // Act: the total arrives
      release()

      // Assess
      await waitForText(page, 'traces-total', `${formatTotal(stats)} calls`)
      expect(await page.getByTestId('page-range').textContent()).toBe(`1–50 of ${formatTotal(stats)}`)
    } finally {
      release()
      await page.unroute('**/calls/query_stats')
    }
  })

  it("rolls up a completion's tokens and cost as trace/usage does", async () => {
    // Prepare
    const rolled = await post('trace/usage', { filter: { trace_ids: [completionCall.trace_id] }, include_costs: true })
    const usage = rolled.call_usage[completionCall.id][MODEL]

    // Act
    await page.goto(`${server.url}/console/#/trace/${completionCall.trace_id}`)
    await page.getByTestId('trace-usage-row').waitFor()

    // Assess
    const cells = await page.getByTestId('trace-usage-row').locator('td').allTextContents()
    const cost = totalCost(usage)
    expect(cells).toEqual([
      MODEL,
      formatCount(usage.requests),
      formatTokens(usage.prompt_tokens),
      formatTokens(usage.completion_tokens),
      formatTokens(usage.total_tokens),
      formatCost(cost),
    ])
    expect(await page.getByTestId('trace-usage-pricing').textContent()).toContain("project's cost table")
    await waitForText(page, 'call-detail-name', 'loom.chat.completions')
    await checkPage('trace-completion')
  })

  it('says when a deep link names a call, trace, queue or object that does not exist, and the pages still work', async () => {
    // Prepare
    const calls = await streamCalls({ project_id: project, filter: { trace_ids: [run.ids.trace] } })
    const [missingCall, missingTrace, missingQueue] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
    const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`)

    // Act: a trace with a selected call that does not exist (call/read answers {"call": null}), as a queue item of a
    // deleted call links to it
    await go(`#/trace/${run.ids.trace}?call=${missingCall}`)

    // Assess: the call says so, the rest of the trace works
    await waitForTextContaining(page, 'call-detail-missing', 'Call not found (it may have been deleted)')
    await waitForCount(page, 'trace-tree-row', calls.length)
    await page.locator(`[data-testid=trace-tree-row][data-call-id="${run.ids.agent}"] button.tree-name`).click()
    await waitForText(page, 'call-detail-name', 'agent')

    // Act and assess: a trace, a queue and an object that do not exist
    await go(`#/trace/${missingTrace}`)
    await waitForTextContaining(page, 'trace-empty', `No calls found for trace ${missingTrace}`)
    expect(await page.getByTestId('trace-meta').textContent()).toContain('0 calls')
    await go(`#/queues/${missingQueue}`)
    await waitForTextContaining(page, 'queue-not-found', 'Queue not found')
    expect(await page.getByTestId('queue-detail').count()).toBe(0)
    await go('#/objects/no-such-object')
    await waitForTextContaining(page, 'object-not-found', 'Object not found')

    // Act: on to another page
    await open('traces', 'page-traces')

    // Assess: that page alone, no uncaught error on the way
    expect(await page.locator('main > [data-testid^="page-"]').count()).toBe(1)
    expect(watched.errors).toEqual([])
  })

  it("shows a page's render error as an alert, and the next page renders alone", async () => {
    // Prepare: an answer the Objects page cannot render (a null object), standing for any render error
    await page.route('**/objs/query', async (route) => {
      if (route.request().postDataJSON()?.filter?.latest_only === true) await route.fulfill({ json: { objs: [null] } })
      else await route.continue()
    })

    try {
      // Act
      await page.getByTestId('nav-objects').click()

      // Assess: the error as an alert, with its message
      await waitForTextContaining(page, 'page-error', 'Cannot read properties of null')
      expect(await page.getByTestId('page-error').getAttribute('role')).toBe('alert')
    } finally {
      await page.unroute('**/objs/query')
    }

    // Act: navigation goes on
    await open('traces', 'page-traces')

    // Assess: the next page alone, the error contained
    expect(await page.getByTestId('page-error').count()).toBe(0)
    expect(await page.locator('main > [data-testid^="page-"]').count()).toBe(1)
    expect(watched.errors).toEqual([])
  })

  it('charts a feedback metric with the window totals of feedback/stats', async () => {
    // Prepare
    const type = 'wandb.runnable.judge'
    const end = new Date()
    const start = new Date(end.getTime() - 7 * 24 * 3600_000)
    const stats = await post('feedback/stats', {
      feedback_type: type,
      start: start.toISOString(),
      end: end.toISOString(),
      metrics: [{ json_path: 'output.score', value_type: 'numeric', aggregations: ['avg', 'count'] }],
    })

    // Act
    await open('feedback', 'page-feedback')
    await page.getByTestId('feedback-type').selectOption(type)
    await page.getByTestId('feedback-metric').selectOption('output.score')

    // Assess
    await waitForText(page, 'feedback-total-count', formatNumber(stats.window_stats.output_score.count))
    expect(await page.getByTestId('feedback-total-avg').textContent()).toBe(
      formatNumber(stats.window_stats.output_score.avg),
    )
    await page.locator('[data-testid=feedback-chart] .uplot canvas').waitFor()
    await checkPage('feedback')
  })

  it("asks feedback/stats for a window ending when it asks, and clears a failed answer's error on the next", async () => {
    // Prepare: the page shows the judge's score (above); record the window end of each feedback/stats request
    const ends: string[] = []
    const onRequest = (r: Request) => {
      if (new URL(r.url()).pathname.endsWith('/feedback/stats')) ends.push(r.postDataJSON().end)
    }
    page.on('request', onRequest)
    await page.route('**/feedback/stats', (route) => route.fulfill({ status: 500, json: { reason: 'stats exploded' } }))

    try {
      // Act: one request fails, the next succeeds
      await page.getByTestId('feedback-bucket').selectOption('900')
      await waitForText(page, 'feedback-error', 'Could not read the feedback statistics (HTTP 500): stats exploded')
      await page.unroute('**/feedback/stats')
      const answered = page.waitForResponse((r) => r.url().endsWith('/feedback/stats') && r.status() === 200)
      await page.getByTestId('feedback-bucket').selectOption('3600')
      await answered
    } finally {
      page.off('request', onRequest)
      await page.unroute('**/feedback/stats')
    }

    // Assess: the old error is gone, and each request's window ended when it was sent
    await page.getByTestId('feedback-error').waitFor({ state: 'detached', timeout: 5_000 })
    expect(ends).toHaveLength(2)
    expect(Date.parse(ends[1] ?? '')).toBeGreaterThan(Date.parse(ends[0] ?? ''))
  })

  it("lists a type's newest feedback with the metric, the user and the call's link, a page at a time", async () => {
    // Prepare: the ratings as feedback/query answers them, newest first, and the traces of the calls they are on
    const type = { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'rating' }] } }
    const expected: Json[] = (
      await post('feedback/query', { query: type, sort_by: [{ field: 'created_at', direction: 'desc' }] })
    ).result
    const calls = await streamCalls({
      project_id: project,
      filter: { call_ids: [run.ids.lookup, run.ids.judge, xssCallId] },
    })
    const nameOf = (f: Json) => callName(calls.find((c) => f.weave_ref === `weave:///${project}/call/${c.id}`) as Call)
    const [entity, name] = project.split('/').map(encodeURIComponent)
    const address = () => new URL(page.url()).hash.replace(`#/${entity}/${name}/`, '')
    const shownIds = () =>
      page.getByTestId('feedback-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-feedback-id')))
    const texts = (testId: string) => page.getByTestId(testId).allTextContents()
    const ids = (rows: Json[]) => rows.map((f) => f.id)

    // Act: the ratings' scores, in UTC
    await open('feedback', 'page-feedback')
    await page.getByTestId('feedback-type').selectOption('rating')
    await page.getByTestId('feedback-metric').selectOption('score')
    await page.getByTestId('feedback-timezone').selectOption('UTC')

    // Assess: the newest 25, newest first, each with its score, user, time and call
    expect(expected).toHaveLength(RATINGS)
    const first = expected.slice(0, 25)
    await expect.poll(shownIds).toEqual(ids(first))
    expect(await texts('feedback-row-value')).toEqual(first.map((f) => String(f.payload.score)))
    expect(await texts('feedback-row-user')).toEqual(first.map((f) => f.wb_user_id))
    expect(await texts('feedback-row-time')).toEqual(first.map((f) => formatDate(f.created_at, 'UTC')))
    expect(await page.getByTestId('feedback-rows-time-column').textContent()).toBe('Time (UTC)')
    expect(await page.getByTestId('feedback-rows-range').textContent()).toBe('1–25 of 30')
    await waitForCount(page, 'feedback-row-call', 25)
    expect(await texts('feedback-row-call')).toEqual(first.map(nameOf))
    // The newest payload, opened in the JSON viewer, shows its text as text.
    await page.getByTestId('feedback-row-payload').first().click()
    await waitForTextContaining(page, 'json-feedback-payload', XSS[1])
    await checkPage('feedback-rows')
    // On a phone, with the table scrolled to its right edge, the opened payload is drawn where the reader is.
    await resizeTo(page, NARROW)
    try {
      await page.locator('.table-wrap:has([data-testid=feedback-rows])').evaluate((box) => {
        box.scrollLeft = box.scrollWidth
      })
      const shown = await page.getByTestId('json-feedback-payload').boundingBox()
      const width = page.viewportSize()?.width ?? 0
      expect(shown?.x).toBeGreaterThanOrEqual(0)
      expect((shown?.x ?? 0) + (shown?.width ?? 0)).toBeLessThanOrEqual(width)
    } finally {
      await resizeTo(page, WIDE)
    }

    // Act + Assess: the second page is the link's, the object's ref is text; the render that first shows its range
    // (before the effects run after paint) shows its rows, never the first page's
    await page.evaluate(
      `(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('[data-testid=feedback-rows-range]')?.textContent?.startsWith('26–')) return
          observer.disconnect()
          window.__firstRowAtNext = document.querySelector('[data-testid=feedback-row]')?.getAttribute('data-feedback-id')
        })
        observer.observe(document.body, { childList: true, subtree: true, characterData: true })
      })()`,
    )
    await page.getByTestId('feedback-rows-next').click()
    const second = expected.slice(25)
    await expect.poll(shownIds).toEqual(ids(second))
    expect(await page.evaluate('window.__firstRowAtNext')).toBe(second[0].id)
    expect(address()).toContain('offset=25')
    expect(await page.getByTestId('feedback-rows-range').textContent()).toBe('26–30 of 30')
    expect(await page.getByTestId('feedback-rows-next').isDisabled()).toBe(true)
    await waitForCount(page, 'feedback-row-call', second.length - 1)
    expect(await texts('feedback-row-ref')).toEqual([objectRef()])

    // Act + Assess: a rating's call opens in its trace, and Back returns to the same page of feedback
    const rating = second.find((f) => f.weave_ref.endsWith(`/call/${run.ids.lookup}`))
    await page.locator(`[data-feedback-id="${rating.id}"] [data-testid=feedback-row-call]`).click()
    await page.locator(`[data-testid=call-detail][data-call-id="${run.ids.lookup}"]`).waitFor()
    expect(address()).toBe(`trace/${run.ids.trace}?call=${run.ids.lookup}`)
    await waitForText(page, 'call-detail-name', nameOf(rating))
    await page.goBack()
    await expect.poll(shownIds).toEqual(ids(second))
    await page.getByTestId('feedback-rows-prev').click()
    await expect.poll(shownIds).toEqual(ids(first))
    expect(address()).not.toContain('offset=')

    // Act + Assess: a failed page shows its alert and no table, and the next request clears it
    await page.route('**/feedback/query', (route) =>
      route.request().postDataJSON().offset === undefined
        ? route.continue()
        : route.fulfill({ status: 500, json: { reason: 'rows exploded' } }),
    )
    try {
      await page.getByTestId('feedback-rows-next').click()
      await waitForText(page, 'feedback-rows-error', 'Could not read the feedback (HTTP 500): rows exploded')
      expect(await page.getByTestId('feedback-rows').count()).toBe(0)
    } finally {
      await page.unroute('**/feedback/query')
    }
    await page.getByTestId('feedback-range').selectOption('30d')
    await expect.poll(shownIds).toEqual(ids(first))
    expect(await page.getByTestId('feedback-rows-error').count()).toBe(0)
    expect(address()).not.toContain('offset=')

    // Act + Assess: a link past the window's rows offers the first page (Previous would step back 25 rows at a time)
    const show = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(`#/${entity}/${name}/${hash}`)}`)
    await show('feedback?type=rating&metric=score&range=30d&tz=UTC&offset=9975')
    await page.getByTestId('feedback-rows-first').click()
    await expect.poll(shownIds).toEqual(ids(first))
    expect(address()).not.toContain('offset=')

    // Act + Assess: a type's default metric is its numeric one; another type leaves the link's metric behind
    await show('feedback?type=rating&range=30d&tz=UTC')
    await expect.poll(() => page.getByTestId('feedback-metric').inputValue()).toBe('score')
    const other = (await page.getByTestId('feedback-type').locator('option').allTextContents()).find(
      (t) => t !== 'rating',
    )
    await page.getByTestId('feedback-metric').selectOption('score')
    await page.getByTestId('feedback-type').selectOption(other ?? '')
    await expect.poll(address).toContain(`type=${encodeURIComponent(other ?? '')}`)
    expect(address()).not.toContain('metric=score')
  })

  it('shows the totals of GET /v1/usage for the project', async () => {
    // Prepare
    const end = new Date()
    const start = new Date(end.getTime() - 24 * 3600_000)
    const query = new URLSearchParams({ project, start: start.toISOString(), end: end.toISOString() })
    const report = await getV1(`usage?${query}`)

    // Act
    await open('usage', 'page-usage')

    // Assess
    await waitForText(page, 'usage-total-requests', formatCount(report.total.requests))
    expect(report.total.requests).toBe(2)
    expect(await page.getByTestId('usage-total-prompt').textContent()).toBe(formatCount(report.total.prompt_tokens))
    expect(await page.getByTestId('usage-total-completion').textContent()).toBe(
      formatCount(report.total.completion_tokens),
    )
    expect(await page.getByTestId('usage-total-tokens').textContent()).toBe(formatCount(report.total.total_tokens))
    expect(await page.getByTestId('usage-total-cost').textContent()).toBe(formatCost(report.total.cost_usd))
    expect(await page.getByTestId('usage-pricing').textContent()).toContain('priced from the model catalog')
    expect(await page.getByTestId('usage-table').textContent()).toContain(MODEL)
    // The table shows hours in the browser's zone and says which (the CSV's are UTC).
    const zone = await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')
    expect(await page.getByTestId('usage-time-column').textContent()).toBe(`Hour (${zone})`)
    await page.locator('[data-testid=usage-chart] .uplot canvas').waitFor()
    await checkPage('usage')
  })

  it('charts the training metrics of the preview models the API lists', async () => {
    // Prepare
    const [entity, name] = project.split('/') as [string, string]
    const models = (await getV1(`preview/models?${new URLSearchParams({ entity, project: name })}`)).data
    const [model] = models
    const history = await getV1(`preview/models/${model.id}/metrics`)

    // Act
    await open('training', 'page-training')

    // Assess
    await waitForCount(page, 'training-model-row', models.length)
    const ids = await page
      .getByTestId('training-model-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-model-id')))
    expect(ids).toEqual(models.map((m: { id: string }) => m.id))
    const splits = [...new Set(history.rows.map((r: { split: string }) => r.split))]
    expect(splits).toEqual(['train'])
    await page.locator('[data-testid=training-split][data-split=train]').waitFor()
    const reward = page.locator('[data-testid="training-chart-train-train/reward"] .uplot canvas')
    await reward.waitFor()
    // The split is the section's heading, not repeated in each chart's title.
    expect(await reward.getAttribute('aria-label')).toBe('train/reward')
    // Two logs at one step: counted as such, and charted over the time logged, one point each.
    const row = page.locator(`[data-testid=training-model-row][data-model-id="${model.id}"]`)
    expect(history.rows.map((r: { step: number }) => r.step)).toEqual([0, 0])
    expect(await row.getByTestId('training-model-logs').textContent()).toBe('2')
    expect(await row.getByTestId('training-model-steps').textContent()).toBe('1')
    const points = () => page.getByTestId('training-chart-train-train/reward').getAttribute('data-points')
    expect(await page.getByTestId('training-axis').inputValue()).toBe('time')
    expect(await points()).toBe('2')
    await checkPage('training')
    // Over the step, both logs still: at step 0, one above the other. The pick is the link's `x`.
    await page.getByTestId('training-axis').selectOption('step')
    await expect.poll(() => new URL(page.url()).hash).toMatch(/\/training\?x=step$/)
    await expect.poll(points).toBe('2')
    await screenshot(page, 'training-step')
    await page.reload()
    await page.locator('[data-testid="training-chart-train-train/reward"] .uplot canvas').waitFor()
    expect(await page.getByTestId('training-axis').inputValue()).toBe('step')
    await page.goBack()
    await expect.poll(() => page.getByTestId('training-axis').inputValue()).toBe('time')
    await page.getByTestId('training-model-toggle').first().uncheck()
    await waitForTextContaining(page, 'training-pick-hint', 'Pick a model above')
    await page.getByTestId('training-model-toggle').first().check()
    await page.getByTestId('training-pick-hint').waitFor({ state: 'detached' })
  })

  it('keeps a 150-character feedback type and a 126-character model name inside the page', async () => {
    // Prepare: a project of their own, so the other tests' pickers and counts stay as they are
    const wide = `${caller.entity}/wide`
    const longType = `rating-${'that-keeps-on-going-'.repeat(7)}`
    await seedFeedback(wide, new Date().toISOString(), { score: 1 }, { feedback_type: longType })
    const res = await createModelApp.request(
      '/v1/preview/models',
      jsonInit(
        {
          entity: caller.entity,
          project: 'wide',
          name: `model-${'long-'.repeat(24)}`,
          base_model: 'Qwen/Qwen2.5-7B-Instruct',
        },
        caller.bearer,
      ),
    )
    const model = (await res.json()) as { id: string; name: string }
    const body = {
      model_id: model.id,
      split: 'train',
      trajectory_groups: [{ trajectories: [trajectory(0.5), trajectory(0.7)], exceptions: [] }],
    }
    const logged = await fetch(`${server.url}/v1/preview/models/${model.id}/log`, jsonInit(body, caller.bearer))
    expect(logged.status).toBe(200)
    const at = (hash: string) => `${server.url}/console/#/${encodeURIComponent(caller.entity)}/wide/${hash}`

    try {
      // Act: the Feedback page on a phone, the type picker as wide as its longest option unless it may shrink
      await resizeTo(page, NARROW)
      await page.goto(at('feedback'))
      await expect.poll(() => page.getByTestId('feedback-type').inputValue()).toBe(longType)
      await page.locator('[data-testid=feedback-chart] .uplot canvas').waitFor()

      // Assess
      expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
      await screenshot(page, 'feedback-long-type-390')

      // Act: the Training charts, whose legend names the model, at both widths
      for (const viewport of [WIDE, NARROW]) {
        await resizeTo(page, viewport)
        await page.goto(at(`training?models=${model.id}`))
        const chart = page.getByTestId('training-chart-train-train/reward')
        await chart.locator('.u-legend .u-label', { hasText: model.name }).waitFor()

        // Assess
        expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
        await screenshot(page, `training-long-model-${viewport.width}`)
      }
    } finally {
      await resizeTo(page, WIDE)
      await page.goto(`${server.url}/console/#/${encodeURIComponent(caller.entity)}/console/traces`)
      await page.getByTestId('page-traces').waitFor()
    }
  })

  it('shows annotation queues with annotation_queues/stats and their items', async () => {
    // Prepare
    const { stats } = await post('annotation_queues/stats', { queue_ids: [queueId] })

    // Act
    await open('queues', 'page-queues')

    // Assess
    const row = page.locator(`[data-testid=queues-row][data-queue-id="${queueId}"]`)
    await waitForText(page, 'queues-total', formatCount(stats[0].total_items))
    expect(await row.getByTestId('queues-completed').textContent()).toBe(formatCount(stats[0].completed_items))
    await waitForCount(page, 'queue-item-row', stats[0].total_items)
    const calls = await page
      .getByTestId('queue-item-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-call-id')))
    expect(calls.sort()).toEqual([run.ids.agent, completionCall.id].sort())
    const zone = await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')
    expect(await page.getByTestId('queue-started-column').textContent()).toBe(`Call started (${zone})`)
    await checkPage('queues')
  })

  it('shows an object, its versions as obj/read lists them and the latest value as text', async () => {
    // Prepare
    const versions = (await post('objs/query', { filter: { object_ids: ['settings'] }, metadata_only: true })).objs
    const latest = versions.find((o: { is_latest: number }) => o.is_latest === 1)
    const value = (await post('obj/read', { object_id: 'settings', digest: latest.digest })).obj.val

    // Act
    await open('objects', 'page-objects')
    await page.locator('[data-testid=objects-row][data-object-id=settings] a').click()

    // Assess
    await waitForCount(page, 'object-version-row', versions.length)
    expect(versions.length).toBe(2)
    await page.locator(`[data-testid=object-version-row][data-digest="${latest.digest}"].selected`).waitFor()
    await page.getByTestId('json-object-value').waitFor()
    await waitForTextContaining(page, 'json-object-value', value.note)
    expect(value.note).toBe(XSS[0])
    const zone = await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')
    expect(await page.getByTestId('objects-created-column').textContent()).toBe(`Created (${zone})`)
    expect(await page.getByTestId('object-created-column').textContent()).toBe(`Created (${zone})`)
    const created = page.getByTestId('objects-created').first()
    expect(
      await created.evaluate((el) => (globalThis as unknown as StyledWindow).getComputedStyle(el).whiteSpace),
    ).toBe('nowrap')
    await checkPage('objects')
  })

  it("shows a Dataset's rows from table/query with the count of table/query_stats, a page at a time", async () => {
    // Prepare: the Dataset the SDK published, and its table as the API answers it
    const [latest] = (await post('objs/query', { filter: { object_ids: ['questions'], latest_only: true } })).objs
    const dataset = (await post('obj/read', { object_id: 'questions', digest: latest.digest })).obj.val
    const digest = String(dataset.rows).split('/table/')[1]
    const { count } = await post('table/query_stats', { digest })
    const first: Json[] = (await post('table/query', { digest, limit: 50 })).rows
    const rest: Json[] = (await post('table/query', { digest, offset: 50, limit: 50 })).rows
    const shownRows = () =>
      page.getByTestId('object-table-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row-index')))
    const indexes = (rows: Json[]) => rows.map((r) => String(r.original_index))
    const [entity, name] = project.split('/').map(encodeURIComponent)
    const address = () => new URL(page.url()).hash.replace(`#/${entity}/${name}/`, '')
    const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(`#/${entity}/${name}/${hash}`)}`)
    const versionLink = page.locator(`[data-testid=object-version-row][data-digest="${latest.digest}"] a`)

    // Act
    await open('objects', 'page-objects')
    await page.locator('[data-testid=objects-row][data-object-id=questions] a').click()

    // Assess: the count, the first 50 rows, one column per key of theirs, long values cut
    expect(count).toBe(60)
    await waitForText(page, 'object-table-count', '60 rows')
    await expect.poll(shownRows).toEqual(indexes(first))
    const headers = await page.locator('[data-testid=object-table-rows] th').allTextContents()
    expect(headers).toEqual(['Row', ...columnsOf(first.map((r) => r.val))])
    expect(headers).toEqual(['Row', 'question', 'expected', 'context', 'note'])
    const cells = await page.getByTestId('object-table-row').first().locator('td').allTextContents()
    expect(cells).toEqual(['0', 'q0', compactValue(first[0].val.expected), compactValue(first[0].val.context), ''])
    expect(cells[2]).toBe('{"answer":0,"tags":["t0"]}')
    expect(cells[3]).toMatch(/…$/)
    expect(await page.getByTestId('object-table-range').textContent()).toBe('1–50 of 60')
    // A row's number opens the whole row in the JSON viewer.
    await page.getByTestId('object-table-row-toggle').first().click()
    await waitForTextContaining(page, 'json-object-table-row', XSS[0])
    await checkPage('objects-dataset')

    // Act + Assess: the next page is in the address, replacing the entry; a reload shows it, Back leaves the object
    // and Forward returns to it
    const entries = () => page.evaluate('history.length')
    const before = await entries()
    // The first row shown in the render that first shows the next page's range (before the effects run after paint)
    await page.evaluate(
      `(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('[data-testid=object-table-range]')?.textContent?.startsWith('51–')) return
          observer.disconnect()
          window.__firstRowAtNext = document.querySelector('[data-testid=object-table-row]')?.getAttribute('data-row-index')
        })
        observer.observe(document.body, { childList: true, subtree: true, characterData: true })
      })()`,
    )
    await page.getByTestId('object-table-next').click()
    await expect.poll(shownRows).toEqual(indexes(rest))
    // That render shows the second page's rows: the first page's are never shown under its range
    expect(await page.evaluate('window.__firstRowAtNext')).toBe('50')
    expect(address()).toBe('objects/questions?rows=50')
    expect(await entries()).toBe(before)
    expect(await page.getByTestId('object-table-range').textContent()).toBe('51–60 of 60')
    expect(await page.getByTestId('object-table-next').isDisabled()).toBe(true)
    await page.reload()
    await expect.poll(shownRows).toEqual(indexes(rest))
    expect(await page.getByTestId('object-table-range').textContent()).toBe('51–60 of 60')
    // A version's link starts at its first page.
    expect(await versionLink.getAttribute('href')).toBe(`#/${entity}/${name}/objects/questions?digest=${latest.digest}`)
    await page.goBack()
    await expect.poll(address).toBe('objects')
    await page.goForward()
    await expect.poll(shownRows).toEqual(indexes(rest))
    expect(address()).toBe('objects/questions?rows=50')
    await page.getByTestId('object-table-prev').click()
    await expect.poll(shownRows).toEqual(indexes(first))
    expect(address()).toBe('objects/questions')

    // Act + Assess: an offset past the rows offers the first page; one that is not a count reads as the first page
    await go('objects/questions?rows=500')
    await page.getByTestId('object-table-first').click()
    await expect.poll(shownRows).toEqual(indexes(first))
    expect(address()).toBe('objects/questions')
    await go('objects/questions?rows=50')
    await expect.poll(shownRows).toEqual(indexes(rest))
    await go('objects/questions?rows=abc')
    await expect.poll(shownRows).toEqual(indexes(first))
    expect(await page.getByTestId('object-table-range').textContent()).toBe('1–50 of 60')
  })

  it("switches to another object without reading it at the previous object's version", async () => {
    // Prepare: another object than settings (the judge op the SDK published), and the obj/read requests the page sends
    const objects = (await post('objs/query', { filter: { latest_only: true }, metadata_only: true })).objs
    const other = objects.find((o: { object_id: string }) => o.object_id !== 'settings')
    const reads: { object_id: string; digest: string }[] = []
    const onRequest = (r: Request) => {
      if (new URL(r.url()).pathname.endsWith('/obj/read')) reads.push(r.postDataJSON())
    }
    await page.goto(`${server.url}/console/#/objects/settings`)
    await page.locator('[data-testid=object-detail][data-object-id=settings] [data-testid=json-object-value]').waitFor()
    page.on('request', onRequest)

    try {
      // Act
      await page.locator(`[data-testid=objects-row][data-object-id="${other.object_id}"] a`).click()
      await page
        .locator(`[data-testid=object-detail][data-object-id="${other.object_id}"] [data-testid=json-object-value]`)
        .waitFor()
    } finally {
      page.off('request', onRequest)
    }

    // Assess: one read, at the new object's own latest version, and no error
    expect(reads).toEqual([expect.objectContaining({ object_id: other.object_id, digest: other.digest })])
    expect(await page.getByTestId('object-error').count()).toBe(0)
  })

  it('renders the API reference from /openapi.json', async () => {
    // Act
    await open('api', 'page-api')

    // Assess
    await page.locator('[data-testid=api-reference] .opblock').first().waitFor()
    expect(await page.getByTestId('api-reference').textContent()).toContain('/calls/stream_query')
    // "Try it out" is off, so there is nothing to authorize: no Authorize button, no per-operation lock.
    expect(await page.locator('[data-testid=api-reference] .authorize').count()).toBe(0)
    expect(await page.locator('[data-testid=api-reference] button.authorization__btn').count()).toBe(0)
    await checkPage('api')
  })

  it('shows one alert per failed request, clears it on the next, and an empty state for an empty queue', async () => {
    // Prepare
    const fail = (reason: string) => (route: Route) => route.fulfill({ status: 500, json: { reason } })
    const emptyQueue = await newQueue({ ...caller, project }, 'empty')

    // Act + Assess: Training's failed metrics, then a new request that succeeds
    await page.route('**/metrics', fail('metrics exploded'))
    await open('training', 'page-training')
    await waitForTextContaining(page, 'training-error', 'metrics exploded')
    await page.unroute('**/metrics')
    await page.getByTestId('training-model-toggle').first().uncheck()
    await page.getByTestId('training-model-toggle').first().check()
    await page.locator('[data-testid="training-chart-train-train/reward"] .uplot canvas').waitFor()
    expect(await page.getByTestId('training-error').count()).toBe(0)

    // Act + Assess: Objects whose objs/query fails says so once, not once for the list and once for the object
    await page.route('**/objs/query', fail('query exploded'))
    try {
      await page.goto(`${server.url}/console/#/objects/settings`)
      await waitForTextContaining(page, 'objects-error', 'query exploded')
      await page.waitForTimeout(300)
      expect(await page.locator('[role=alert]').count()).toBe(1)
    } finally {
      await page.unroute('**/objs/query')
    }

    // Act + Assess: a queue whose items fail shows the alert and no empty table; an empty queue an empty state
    await page.route('**/items/query', fail('items exploded'))
    try {
      await page.goto(`${server.url}/console/#/queues/${queueId}`)
      await waitForTextContaining(page, 'queue-error', 'items exploded')
      expect(await page.getByTestId('queue-items').count()).toBe(0)
    } finally {
      await page.unroute('**/items/query')
    }
    await page.goto(`${server.url}/console/#/queues/${emptyQueue}`)
    await page.getByTestId('queue-items-empty').waitFor()
    expect(await page.getByTestId('queue-progress').count()).toBe(0)

    // Act + Assess: the API page shows a failed /openapi.json in the console's own error box
    await page.route('**/openapi.json', (route) => route.fulfill({ status: 503, json: { reason: 'spec down' } }))
    try {
      await open('api', 'page-api')
      await waitForText(page, 'api-error', 'Could not load the API reference (HTTP 503): spec down')
      expect(await page.getByTestId('api-error').getAttribute('role')).toBe('alert')
    } finally {
      await page.unroute('**/openapi.json')
    }
    expect(watched.errors).toEqual([])
  })

  it("keeps each page's pickers in the address: a reload shows them, Back the previous ones, a bad value the default", async () => {
    // Prepare: a second model to compare, the older version of settings, and the address of each page
    const second = await newModel(caller, project.split('/')[1])
    const versions = (await post('objs/query', { filter: { object_ids: ['settings'] }, metadata_only: true })).objs
    const older = versions.find((o: { is_latest: number }) => o.is_latest === 0)
    const latest = versions.find((o: { is_latest: number }) => o.is_latest === 1)
    const [entity, name] = project.split('/').map(encodeURIComponent)
    const address = () => new URL(page.url()).hash.replace(`#/${entity}/${name}/`, '')
    const value = (testId: string) => () => page.getByTestId(testId).inputValue()
    const ticked = (id: string) => () =>
      page
        .locator(`[data-testid=training-model-row][data-model-id="${id}"] [data-testid=training-model-toggle]`)
        .isChecked()
    const zone = await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')
    const reload = async (root: string) => {
      await page.reload()
      await page.getByTestId(root).waitFor()
    }

    // Act + Assess: Feedback's type, metric, range, bucket, zone and percentiles
    await open('feedback', 'page-feedback')
    await page.getByTestId('feedback-type').selectOption('wandb.runnable.judge')
    await page.getByTestId('feedback-metric').selectOption('output.score')
    await page.getByTestId('feedback-range').selectOption('30d')
    await page.getByTestId('feedback-bucket').selectOption('3600')
    await page.getByTestId('feedback-timezone').selectOption('Asia/Tokyo')
    await page.getByTestId('feedback-percentiles').getByLabel('p90').check()
    await expect
      .poll(address)
      .toBe(
        'feedback?type=wandb.runnable.judge&metric=output.score&range=30d&bucket=3600&tz=Asia%2FTokyo&p=50%2C90%2C95',
      )
    await reload('page-feedback')
    await expect.poll(value('feedback-metric')).toBe('output.score')
    expect(await value('feedback-type')()).toBe('wandb.runnable.judge')
    expect(await value('feedback-range')()).toBe('30d')
    expect(await value('feedback-bucket')()).toBe('3600')
    expect(await value('feedback-timezone')()).toBe('Asia/Tokyo')
    await page.locator('[data-testid=feedback-chart] .uplot canvas').waitFor()
    expect(await page.getByTestId('feedback-percentiles').getByLabel('p90').isChecked()).toBe(true)
    await page.goBack()
    await expect.poll(() => page.getByTestId('feedback-percentiles').getByLabel('p90').isChecked()).toBe(false)
    await page.goBack()
    await expect.poll(value('feedback-timezone')).toBe(zone)
    expect(await value('feedback-bucket')()).toBe('3600')

    // Act + Assess: Usage's range, buckets, stacking and measure
    await open('usage', 'page-usage')
    await page.getByTestId('usage-range').selectOption('7d')
    await page.getByTestId('usage-resolution').selectOption('day')
    await page.getByTestId('usage-group').selectOption('project')
    await page.getByTestId('usage-metric').selectOption('requests')
    await expect.poll(address).toBe('usage?range=7d&res=day&group=project&metric=requests')
    await reload('page-usage')
    await page.getByTestId('usage-totals').waitFor()
    expect(await value('usage-range')()).toBe('7d')
    expect(await value('usage-resolution')()).toBe('day')
    expect(await value('usage-group')()).toBe('project')
    expect(await value('usage-metric')()).toBe('requests')
    await page.goBack()
    await expect.poll(value('usage-metric')).toBe('total_tokens')
    expect(await value('usage-group')()).toBe('project')

    // Act + Assess: the models Training compares
    await open('training', 'page-training')
    await waitForCount(page, 'training-model-row', 2)
    const [first = '', next = ''] = await page
      .getByTestId('training-model-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-model-id') ?? ''))
    expect([first, next]).toContain(second.id)
    await expect.poll(ticked(first)).toBe(true)
    await page.locator(`[data-model-id="${next}"] [data-testid=training-model-toggle]`).check()
    await expect.poll(address).toBe(`training?models=${first}%2C${next}`)
    await page.locator(`[data-model-id="${first}"] [data-testid=training-model-toggle]`).uncheck()
    await reload('page-training')
    await expect.poll(ticked(next)).toBe(true)
    expect(await ticked(first)()).toBe(false)
    await page.goBack()
    await expect.poll(ticked(first)).toBe(true)
    expect(await ticked(next)()).toBe(true)

    // Act + Assess: the version Objects shows, each version a link to it, the one shown marked as current
    const versionLink = (digest: string) => page.locator(`[data-testid=object-version-row][data-digest="${digest}"] a`)
    const olderHref = `#/${entity}/${name}/objects/settings?digest=${older.digest}`
    await open('objects', 'page-objects')
    await page.locator('[data-testid=objects-row][data-object-id=settings] a').click()
    await page.locator(`[data-testid=object-version-row][data-digest="${latest.digest}"].selected`).waitFor()
    expect(await versionLink(older.digest).getAttribute('href')).toBe(olderHref)
    expect(await versionLink(latest.digest).getAttribute('href')).toBe(
      `#/${entity}/${name}/objects/settings?digest=${latest.digest}`,
    )
    expect(await versionLink(latest.digest).getAttribute('aria-current')).toBe('true')
    expect(await versionLink(older.digest).getAttribute('aria-current')).toBeNull()
    await versionLink(older.digest).click()
    await expect.poll(address).toBe(`objects/settings?digest=${older.digest}`)
    await reload('page-objects')
    await page.locator(`[data-testid=object-version-row][data-digest="${older.digest}"].selected`).waitFor()
    expect(await versionLink(older.digest).getAttribute('aria-current')).toBe('true')
    await waitForTextContaining(page, 'json-object-value', XSS[1])
    await page.goBack()
    await page.locator(`[data-testid=object-version-row][data-digest="${latest.digest}"].selected`).waitFor()
    await waitForTextContaining(page, 'json-object-value', XSS[0])
    // A version's link opened afresh (as a new tab would, with this tab's key) shows that version.
    await page.goto('about:blank')
    await page.goto(`${server.url}/console/${olderHref}`)
    await page.locator(`[data-testid=object-version-row][data-digest="${older.digest}"].selected`).waitFor()
    await waitForTextContaining(page, 'json-object-value', XSS[1])

    // Act + Assess: values no page offers read as the defaults
    const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(`#/${entity}/${name}/${hash}`)}`)
    await go('feedback?range=1y&bucket=7&tz=Mars%2FOlympus&p=abc')
    await expect.poll(value('feedback-metric')).not.toBe('')
    expect([await value('feedback-range')(), await value('feedback-bucket')()]).toEqual(['7d', '0'])
    expect(await value('feedback-timezone')()).toBe(zone)
    await go('usage?range=1y&res=week&metric=joules')
    await page.getByTestId('usage-totals').waitFor()
    expect([await value('usage-range')(), await value('usage-metric')()]).toEqual(['24h', 'total_tokens'])
    await go('training?models=gone')
    await expect.poll(ticked(first)).toBe(true)
    await go('objects/settings?digest=gone')
    await page.locator(`[data-testid=object-version-row][data-digest="${latest.digest}"].selected`).waitFor()
    expect(await page.getByTestId('object-error').count()).toBe(0)
    expect(watched.errors).toEqual([])
  })

  it('keeps the key out of URLs, cookies and localStorage, and forgets it on sign-out', async () => {
    // Act
    const cookies = await context.cookies()
    const before = await storedInTab(page)
    await page.getByTestId('sign-out').click()
    await page.getByTestId('page-signin').waitFor()

    // Assess
    expect(requestUrls.length).toBeGreaterThan(10)
    expect(requestUrls.filter((u) => u.includes(caller.key))).toEqual([])
    expect(page.url()).not.toContain(caller.key)
    expect(cookies.filter((c) => c.value.includes(caller.key) || c.name.includes(caller.key))).toEqual([])
    expect(before.local).not.toContain(caller.key)
    expect(before.sessionKey).toBe(caller.key)
    expect(await storedInTab(page)).toEqual({ local: before.local, sessionKey: null })
    await checkPage('signin')
  })
})
