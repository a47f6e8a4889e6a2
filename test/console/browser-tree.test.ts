import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLocalApp } from '../../scripts/local/app.js'
import { jsonInit, newCaller, type TestCaller } from '../support/auth.js'
import { findChromium } from '../support/chromium.js'
import {
  launchChromium,
  NARROW,
  resizeTo,
  screenshot,
  seriousAxeViolations,
  showFresh,
  sidewaysOverflow,
  WIDE,
  watchPage,
} from '../support/console-browser.js'
import { serveApp, type TracingServer } from '../support/weave-sdk.js'

// The trace view's tree and the console's links in a real Chromium (see browser.test.ts) against the local stack in
// this process, on traces written with `call/upsert_batch`: a 300-deep chain, a 2,501-call trace, a root call with a
// 1,300-character op name, a trace of one call, and a trace in a second project whose name has a non-ASCII letter, `&` and `+`.

// The page's globals the functions run inside it read, typed by hand: the root tsconfig has no DOM library.
type Box = { left: number; right: number; top: number; width: number; height: number }
type El = {
  getAttribute: (name: string) => string | null
  getBoundingClientRect: () => Box
  getClientRects: () => { length: number }
  querySelector: (selector: string) => El | null
  closest: (selector: string) => El | null
  textContent: string | null
}
type PageGlobals = {
  document: {
    activeElement: El | null
    documentElement: { scrollWidth: number; clientWidth: number }
    querySelectorAll: (selector: string) => Iterable<El>
    querySelector: (selector: string) => El | null
    createRange: () => { selectNodeContents: (node: El) => void; getClientRects: () => Iterable<Box> }
  }
}

type Seeded = { id: string; parent?: string | undefined; op: string }

const DEEP = 300
const BIG = 2501
const LONG_NAME = `long_${'x'.repeat(1295)}`
// A project name with characters a URL encodes (the Sign in page refuses whitespace in a project, so no space here).
const LINKED_NAME = 'z-link-ü&co+1'

let server: TracingServer
let caller: TestCaller
let project: string
let linkedProject: string
let browser: Browser
const traces = {
  deep: crypto.randomUUID(),
  big: crypto.randomUUID(),
  long: crypto.randomUUID(),
  lone: crypto.randomUUID(),
  linked: crypto.randomUUID(),
}
let deepCalls: Seeded[]
let bigCalls: Seeded[]
let linkedCall: Seeded

// Writes a trace's calls (ended, 10 ms apart, in the given order) through `call/upsert_batch`, 1,000 calls a request
// (about 0.5 MB; fewer requests cost the server about a tenth less CPU than 200 a request).
async function writeTrace(projectId: string, traceId: string, calls: Seeded[], base: number): Promise<void> {
  for (let i = 0; i < calls.length; i += 1000) {
    const batch = calls.slice(i, i + 1000).flatMap((c, j) => {
      const at = base + (i + j) * 10
      return [
        {
          mode: 'start',
          req: {
            start: {
              project_id: projectId,
              id: c.id,
              trace_id: traceId,
              ...(c.parent === undefined ? {} : { parent_id: c.parent }),
              op_name: c.op,
              started_at: new Date(at).toISOString(),
              attributes: {},
              inputs: {},
            },
          },
        },
        {
          mode: 'end',
          req: { end: { project_id: projectId, id: c.id, ended_at: new Date(at + 5).toISOString(), summary: {} } },
        },
      ]
    })
    const res = await fetch(`${server.url}/call/upsert_batch`, jsonInit({ batch }, caller.basic))
    if (res.status !== 200) throw new Error(`upsert_batch: ${res.status} ${await res.text()}`)
  }
}

async function seed(): Promise<void> {
  // On a whole second, so some calls start at one (`…:12Z`, written without a fraction) and the order must still hold.
  const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000
  deepCalls = []
  for (let i = 0; i < DEEP; i++) {
    deepCalls.push({ id: crypto.randomUUID(), parent: deepCalls[i - 1]?.id, op: `depth_${i}` })
  }
  await writeTrace(project, traces.deep, deepCalls, base)
  const bigRoot = crypto.randomUUID()
  bigCalls = [
    { id: bigRoot, op: 'big_root' },
    ...Array.from({ length: BIG - 1 }, (_, i) => ({ id: crypto.randomUUID(), parent: bigRoot, op: `step_${i}` })),
  ]
  await writeTrace(project, traces.big, bigCalls, base + 100_000)
  // The newest root of the project, so the Traces page lists it first.
  await writeTrace(
    project,
    traces.long,
    [
      { id: crypto.randomUUID(), op: LONG_NAME },
      { id: crypto.randomUUID(), op: LONG_NAME },
    ].map((c, i, all) => (i === 0 ? c : { ...c, parent: all[0]?.id })),
    base + 200_000,
  )
  // A trace of one call, older than the others.
  await writeTrace(project, traces.lone, [{ id: crypto.randomUUID(), op: 'lone_op' }], base - 100_000)
  linkedCall = { id: crypto.randomUUID(), op: 'linked_op' }
  await writeTrace(linkedProject, traces.linked, [linkedCall], base)
}

/** A fresh tab (its own sessionStorage) at `hash`, signed in through the page with the picker left as it opens. */
async function signIn(hash: string, viewport = WIDE, choose?: string): Promise<Page> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  await page.goto(`${server.url}/console/${hash}`)
  await page.getByTestId('signin-key').fill(caller.key)
  await page.getByTestId('signin-submit').click()
  await page.getByTestId('project-picker').waitFor()
  if (choose !== undefined) await page.getByTestId('project-picker').selectOption(choose)
  await page.getByTestId('project-open').click()
  return page
}

// One tab per viewport width, signed in to the first project (the picker as it opens) and shared by the tests that
// keep to that project: a sign-in is most of a second. Its page errors are recorded from the start.
const tabs = new Map<number, Promise<{ page: Page; errors: string[] }>>()

/**
 * The viewport's shared tab at `hash`: on first use a fresh tab signed in at `hash` (as `signIn`), after that the tab
 * showing `hash` as a page mounted anew, so nothing of an earlier test's view is left in it.
 */
async function signedIn(hash: string, viewport = WIDE): Promise<{ page: Page; errors: string[] }> {
  const shared = tabs.get(viewport.width)
  if (shared === undefined) {
    const opening = (async () => {
      const page = await signIn(hash, viewport)
      return { page, errors: (await watchPage(page)).errors }
    })()
    tabs.set(viewport.width, opening)
    return opening
  }
  const tab = await shared
  await showFresh(tab.page, hash)
  return tab
}

const go = (page: Page, hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`)

// The tree rows in the DOM: their call id, the visible width of the name button inside its label column, the level the
// row shows as a number (if any) and the level screen readers hear.
function renderedRows(page: Page) {
  return page.evaluate(() => {
    const { document } = globalThis as unknown as PageGlobals
    return [...document.querySelectorAll('[data-testid=trace-tree-row]')].map((row) => {
      const name = row.querySelector('.tree-name')?.getBoundingClientRect() as Box
      const label = row.querySelector('.tree-label')?.getBoundingClientRect() as Box
      return {
        id: row.getAttribute('data-call-id') ?? '',
        visible: Math.max(0, Math.min(name.right, label.right) - Math.max(name.left, label.left)),
        shown: row.querySelector('[data-testid=trace-tree-level]')?.textContent ?? undefined,
        level: /level (\d+)/.exec(row.querySelector('.tree-name')?.textContent ?? '')?.[1],
      }
    })
  })
}

/** The call id of the tree row whose name button has the focus (`<tag>` when something else has it). */
function focusedRow(page: Page): Promise<string> {
  return page.evaluate(() => {
    const { document } = globalThis as unknown as PageGlobals
    const active = document.activeElement
    const row = active?.closest('[data-testid=trace-tree-row]')
    return row === null || row === undefined || active?.getAttribute('class') !== 'tree-name'
      ? `<${(active as unknown as { tagName?: string })?.tagName ?? 'none'}>`
      : (row.getAttribute('data-call-id') ?? '')
  })
}

// Generous: after a key the page re-renders a 2,501-call trace and scrolls before the row exists, which takes seconds
// when the suite shares two cores with a browser; a focus that never lands still fails.
const FOCUS_WAIT_MS = 20_000

async function waitForFocus(page: Page, id: string): Promise<void> {
  await expect.poll(() => focusedRow(page), { timeout: FOCUS_WAIT_MS, interval: 50 }).toBe(id)
}

beforeAll(async () => {
  const executable = findChromium()
  if (executable === undefined) throw new Error('No Chromium: vitest.config.ts should have left this file out')
  // Chromium starts while this process loads the local stack and seeds it.
  const launched = launchChromium(executable).then((b) => {
    browser = b
  })
  caller = await newCaller()
  project = `${caller.entity}/tree`
  // Listed after `tree` in the picker, so the picker's own default is another project.
  linkedProject = `${caller.entity}/${LINKED_NAME}`
  server = await serveApp(await createLocalApp())
  await Promise.all([launched, seed()])
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe('Loom Console trace tree in Chromium', () => {
  it.each([
    ['1280', WIDE],
    ['390', NARROW],
  ])(
    'shows every name of a 300-deep chain at %s px, with the level of rows past the deepest indent',
    async (width, viewport) => {
      // Prepare
      const { page } = await signedIn(`#/trace/${traces.deep}`, viewport)
      await page.locator(`[data-testid=trace-tree][data-row-count="${DEEP}"]`).waitFor()

      // Act: the deepest rows
      await page.getByTestId('trace-tree').evaluate((el) => {
        ;(el as unknown as { scrollTop: number }).scrollTop = 1e6
      })
      await page.locator(`[data-testid=trace-tree-row][data-call-id="${deepCalls.at(-1)?.id}"]`).waitFor()

      // Assess: each row's name has room, each row past the deepest indent shows its level (the one read out)
      const rows = await renderedRows(page)
      expect(rows.length).toBeGreaterThan(10)
      for (const row of rows) {
        const depth = deepCalls.findIndex((c) => c.id === row.id)
        expect(row.visible, `visible name of depth ${depth}`).toBeGreaterThanOrEqual(60)
        expect(row).toMatchObject({ shown: String(depth + 1), level: String(depth + 1) })
      }
      // Shallow rows are told apart by their indent alone, and their names have room too.
      await page.getByTestId('trace-tree').evaluate((el) => {
        ;(el as unknown as { scrollTop: number }).scrollTop = 0
      })
      await page.locator(`[data-testid=trace-tree-row][data-call-id="${deepCalls[0]?.id}"]`).waitFor()
      const top = (await renderedRows(page)).slice(0, 8)
      expect(top.map((r) => r.shown)).toEqual(Array(8).fill(undefined))
      for (const row of top) expect(row.visible).toBeGreaterThanOrEqual(60)
      expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
      expect(await seriousAxeViolations(page)).toEqual([])
      await screenshot(page, `tree-deep-${width}`)
    },
  )

  it('keeps the focus on the row End, ArrowUp, Home, PageDown and PageUp move to in a 2,501-call trace', async () => {
    // Prepare: the whole trace in
    const { page, errors } = await signedIn(`#/trace/${traces.big}`)
    await page.locator(`[data-testid=trace-tree][data-row-count="${BIG}"]`).waitFor({ timeout: 30_000 })
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()
    const erred = errors.length
    const first = bigCalls[0]?.id as string
    const last = bigCalls.at(-1)?.id as string
    const beforeLast = bigCalls.at(-2)?.id as string
    // Start from a settled page: the old-form link rewritten to name the project, the first row selected and focused
    // (a key pressed while the route still changes would race with that rewrite).
    await expect.poll(() => page.url(), { timeout: FOCUS_WAIT_MS }).toContain(`/${encodeURIComponent(caller.entity)}/`)
    await page.locator(`[data-testid=trace-tree-row][data-call-id="${first}"] .tree-name`).click()
    await expect.poll(() => page.url(), { timeout: FOCUS_WAIT_MS }).toContain(`call=${first}`)
    await waitForFocus(page, first)

    // Act and assess: each key selects its row and the focus follows it, so the next key works
    await page.keyboard.press('End')
    await waitForFocus(page, last)
    await expect.poll(() => page.url()).toContain(`call=${last}`)
    await page.keyboard.press('ArrowUp')
    await waitForFocus(page, beforeLast)
    await page.keyboard.press('Home')
    await waitForFocus(page, first)
    await expect.poll(() => page.url()).toContain(`call=${first}`)
    await page.keyboard.press('PageDown')
    const paged = await expect
      .poll(() => focusedRow(page), { timeout: FOCUS_WAIT_MS, interval: 50 })
      .not.toBe(first)
      .then(() => focusedRow(page))
    const index = bigCalls.findIndex((c) => c.id === paged)
    expect(index).toBeGreaterThan(5)
    await expect.poll(() => page.url()).toContain(`call=${paged}`)
    await page.keyboard.press('PageUp')
    await waitForFocus(page, first)
    expect(errors.slice(erred)).toEqual([])
  })

  it('counts the calls under the root, not the root itself', async () => {
    // Prepare + Act: a root with one call below it, once every call is in
    const { page } = await signedIn(`#/trace/${traces.long}`)
    await page.locator('[data-testid=trace-tree][data-row-count="2"]').waitFor()
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()

    // Assess
    expect(await page.getByTestId('trace-under-root').textContent()).toBe('1 call under the root')

    // Act + Assess: the 300-deep chain
    await showFresh(page, `#/trace/${traces.deep}`)
    await page.locator(`[data-testid=trace-tree][data-row-count="${DEEP}"]`).waitFor()
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()
    expect(await page.getByTestId('trace-under-root').textContent()).toBe(`${DEEP - 1} calls under the root`)

    // Act + Assess: a trace of one call has nothing under its root, and says nothing about it
    await showFresh(page, `#/trace/${traces.lone}`)
    await page.locator('[data-testid=trace-tree][data-row-count="1"]').waitFor()
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()
    expect(await page.getByTestId('trace-meta').textContent()).toMatch(/^1 call · /)
    expect(await page.getByTestId('trace-under-root').count()).toBe(0)
  })

  it("shows another trace as loading from its first render, not as the previous trace's calls", async () => {
    // Prepare: a trace of two calls, all in, and a watcher that reads the page's line of figures in the render that
    // first names the next trace (before the effects Preact runs after paint)
    const { page } = await signedIn(`#/trace/${traces.long}`)
    await page.locator('[data-testid=trace-tree][data-row-count="2"]').waitFor()
    await page.getByTestId('trace-meta').filter({ hasNotText: 'loading' }).waitFor()
    await page.evaluate(
      `(() => {
        const observer = new MutationObserver(() => {
          const meta = document.querySelector('[data-testid=trace-meta]')?.textContent ?? ''
          if (!meta.includes(${JSON.stringify(traces.lone)})) return
          observer.disconnect()
          window.__metaAtNext = meta
        })
        observer.observe(document.body, { childList: true, subtree: true, characterData: true })
      })()`,
    )

    // Act: a link to another trace, from this one
    await go(page, `#/trace/${traces.lone}`)
    await page.locator('[data-testid=trace-tree][data-row-count="1"]').waitFor()

    // Assess: no call of the previous trace was counted (or settled) under the new trace's id
    expect(await page.evaluate('window.__metaAtNext')).toMatch(/^0 calls \(loading…\)/)
  })

  it('fits the tree box to a short trace at 390 px, and keeps a long one to its scrolling height', async () => {
    // Prepare + Act: a trace of two calls, stacked above the call's details
    const { page } = await signedIn(`#/trace/${traces.long}`, NARROW)
    await page.locator('[data-testid=trace-tree][data-row-count="2"]').waitFor()
    const inner = (el: unknown) => (el as { clientHeight: number }).clientHeight

    // Assess: as tall as its two 28 px rows, not a fixed box of about 450 px
    expect(await page.getByTestId('trace-tree').evaluate(inner)).toBe(2 * 28)
    expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
    await screenshot(page, 'tree-short-390')

    // Act + Assess: the 300-deep chain stops at 60% of the viewport and scrolls inside the box
    await showFresh(page, `#/trace/${traces.deep}`)
    await page.locator(`[data-testid=trace-tree][data-row-count="${DEEP}"]`).waitFor()
    const box = await page.getByTestId('trace-tree').evaluate((el) => {
      const tree = el as unknown as { clientHeight: number; scrollHeight: number }
      return { client: tree.clientHeight, scroll: tree.scrollHeight }
    })
    expect(box.client).toBeLessThanOrEqual(Math.ceil(0.6 * NARROW.height))
    expect(box.client).toBeGreaterThan(280)
    expect(box.scroll).toBe(DEEP * 28)
  })

  it('opens a shared link to a trace in its own project after sign-in in a fresh tab', async () => {
    // Prepare: a link as the address bar of someone who had the trace open shows it
    const opened = await signIn(`#/trace/${traces.linked}?call=${linkedCall.id}`, WIDE, linkedProject)
    await opened.locator(`[data-testid=call-detail][data-call-id="${linkedCall.id}"]`).waitFor()
    await expect.poll(() => new URL(opened.url()).hash).toContain('/trace/')
    const link = opened.url()
    await opened.context().close()

    // Act: the link in a fresh tab, signed in with the picker as it opens
    const context = await browser.newContext({ viewport: WIDE })
    const page = await context.newPage()
    await page.goto(link)
    await page.getByTestId('signin-key').fill(caller.key)
    await page.getByTestId('signin-submit').click()
    await page.getByTestId('project-picker').waitFor()
    const picked = await page.getByTestId('project-picker').inputValue()
    await page.getByTestId('project-open').click()

    // Assess: the linked project, its trace and call
    expect(link).toContain(`#/${encodeURIComponent(caller.entity)}/${encodeURIComponent(LINKED_NAME)}/trace/`)
    expect(picked).toBe(linkedProject)
    await page.locator(`[data-testid=call-detail][data-call-id="${linkedCall.id}"]`).waitFor()
    await page.getByTestId('trace-tree-row').first().waitFor()
    expect(await page.getByTestId('nav-project').textContent()).toBe(linkedProject)
    expect(page.url()).toBe(link)
    await context.close()
  })

  it("opens a link to another of the key's projects, and says so for a project the key cannot open", async () => {
    // Prepare: signed in to the first project, in a tab of its own (following the link moves its session there)
    const page = await signIn('#/traces')
    await page.getByTestId('page-traces').waitFor()
    // The link without a project is rewritten by an effect, after the page's first paint.
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/${encodeURIComponent(caller.entity)}/tree/traces`)

    // Act: a link to the other project, picked by nobody
    await go(page, `#/${encodeURIComponent(caller.entity)}/${encodeURIComponent(LINKED_NAME)}/trace/${traces.linked}`)

    // Assess
    await page.locator(`[data-testid=trace-tree-row][data-call-id="${linkedCall.id}"]`).waitFor()
    expect(await page.getByTestId('nav-project').textContent()).toBe(linkedProject)

    // Act: a project of an entity the key is no member of
    await go(page, `#/someone-else/private/trace/${traces.linked}`)

    // Assess: a message, not an empty trace of the wrong project
    await page.getByTestId('project-denied').waitFor()
    expect(await page.getByTestId('project-denied').textContent()).toContain('someone-else/private')
    expect(await page.getByTestId('page-trace').count()).toBe(0)
    await page.getByTestId('project-denied-current').click()
    await page.getByTestId('page-traces').waitFor()
    await page.context().close()
  })

  it('opens an older link without the project in the open project, and names the project in the address', async () => {
    // Prepare
    const { page } = await signedIn('#/traces')
    await page.getByTestId('page-traces').waitFor()

    // Act
    await go(page, `#/trace/${traces.deep}`)

    // Assess
    await page.locator(`[data-testid=trace-tree][data-row-count="${DEEP}"]`).waitFor()
    await expect
      .poll(() => new URL(page.url()).hash)
      .toBe(`#/${encodeURIComponent(caller.entity)}/tree/trace/${traces.deep}`)
  })

  it.each([
    ['1280', WIDE],
    ['390', NARROW],
  ])('keeps a 1,300-character op name inside the page at %s px, other cells whole', async (width, viewport) => {
    // Prepare
    const { page } = await signedIn('#/traces', viewport)
    const row = page.getByTestId('traces-row').filter({ hasText: LONG_NAME }).first()
    await row.waitFor()

    // Act: the Traces page with the name in its table
    await resizeTo(page, viewport)

    // Assess: no sideways scroll; the status stays one word on one line
    expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
    expect(await row.getByTestId('traces-status').evaluate((el) => (el as unknown as El).getClientRects().length)).toBe(
      1,
    )
    // Started and User stay on one line where there is room (the name takes the table's spare width), so every row is
    // one line high but the long name's; on a phone a date wraps at its space, leaving the name column room.
    const lines = (testId: string) =>
      page.getByTestId(testId).evaluateAll((cells) =>
        cells.map((cell) => {
          const range = (globalThis as unknown as PageGlobals).document.createRange()
          range.selectNodeContents(cell as unknown as El)
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size
        }),
      )
    const most = viewport === WIDE ? 1 : 2
    for (const column of ['traces-started', 'traces-user']) {
      const counts = await lines(column)
      expect(counts.length, column).toBeGreaterThan(1)
      expect(Math.max(...counts), column).toBeLessThanOrEqual(most)
    }
    // The name shows three lines, as tall as three one-line names, and the cell's title holds all of it.
    const height = (el: unknown) => (el as El).getBoundingClientRect().height
    const line = await page
      .locator('[data-testid=traces-row]:has-text("depth_0") [data-testid=traces-open]')
      .evaluate(height)
    const name = await row.getByTestId('traces-open').evaluate(height)
    expect(Math.round(name / line)).toBe(3)
    expect(await row.getByTestId('traces-op').evaluate(height)).toBeLessThan(4 * line + 16)
    expect(await row.getByTestId('traces-op').getAttribute('title')).toBe(LONG_NAME)
    await screenshot(page, `tree-long-name-traces-${width}`)

    // Act: its trace, the name in the title, the tree and the selected call
    await row.getByTestId('traces-open').click()
    await page.getByTestId('call-detail-name').waitFor()
    await page.getByTestId('trace-tree-row').nth(1).waitFor()

    // Assess
    expect(await sidewaysOverflow(page)).toEqual({ overflow: 0, culprits: [] })
    const widths = await page.evaluate(() => {
      const { document } = globalThis as unknown as PageGlobals
      return {
        page: document.documentElement.scrollWidth,
        view: document.documentElement.clientWidth,
        title: document.querySelector('h1')?.getBoundingClientRect().width ?? 0,
      }
    })
    expect(widths.page).toBeLessThanOrEqual(widths.view)
    expect(widths.title).toBeLessThanOrEqual(widths.view)
    expect(await page.getByTestId('call-detail-name').textContent()).toBe(LONG_NAME)
    await screenshot(page, `tree-long-name-trace-${width}`)
  })
})
