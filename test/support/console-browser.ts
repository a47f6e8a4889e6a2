import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type axe from 'axe-core'
import { type Browser, chromium, type Page } from 'playwright-core'

/** An element, as far as the functions run inside the page read it. */
type PageElement = {
  tagName: string
  className: unknown
  textContent: string | null
  getAttribute: (name: string) => string | null
  getBoundingClientRect: () => { right: number }
}

/**
 * The page's globals that the functions run inside it use, typed by hand: the root tsconfig has no DOM library (it
 * checks Node code), and these functions are serialised into the page, so they reach them through `globalThis`.
 */
type PageGlobals = {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number }
    body: { querySelectorAll: (selector: string) => Iterable<PageElement> }
    querySelector: (selector: string) => PageElement | null
    querySelectorAll: (selector: string) => { length: number }
    addEventListener: (type: string, listener: (e: { violatedDirective: string; blockedURI: string }) => void) => void
  }
  location: { hash: string; replace: (url: string) => void }
  localStorage: Record<string, string>
  sessionStorage: { getItem: (key: string) => string | null }
  axe?: typeof axe
  __xss?: unknown
  __cspViolations?: string[]
}

/** Where the browser tests and `npm run bench:console` leave screenshots (ignored by git). */
export const ARTIFACTS_DIR = join(process.cwd(), 'artifacts', 'console')

/** The wide and narrow viewports every page is checked at. */
export const WIDE = { width: 1280, height: 800 }
export const NARROW = { width: 390, height: 844 }

/** Launches the given Chromium headless (Debian's `chromium`; Playwright's own browser builds are never used). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
}

/** Records what must never happen in a page: uncaught errors and Content-Security-Policy violations. */
export async function watchPage(page: Page): Promise<{ errors: string[] }> {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`))
  // Init scripts run through the DevTools protocol, outside the page's CSP.
  await page.addInitScript(() => {
    const w = globalThis as unknown as PageGlobals
    w.document.addEventListener('securitypolicyviolation', (e) => {
      w.__cspViolations = [...(w.__cspViolations ?? []), `${e.violatedDirective} ${e.blockedURI}`]
    })
  })
  return { errors }
}

// axe-core's minified build (0.65 MB against `axe.source`'s 1.48 MB): it goes to the page again after every navigation,
// through the DevTools pipe, and Chromium compiles it each time.
let minifiedAxe: string | undefined
const axeSource = () => {
  minifiedAxe ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  return minifiedAxe
}

/** An axe-core finding of impact `serious` or `critical`, with the selectors of the nodes it names. */
export type AxeFinding = { id: string; impact: string; help: string; nodes: string[] }

/**
 * Runs axe-core in the page (its source evaluated through the DevTools protocol, so the console's CSP, which refuses
 * inline scripts, does not block it) and returns the serious and critical violations.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeFinding[]> {
  const loaded = await page.evaluate(() => (globalThis as unknown as PageGlobals).axe !== undefined)
  if (!loaded) await page.evaluate(axeSource())
  return page.evaluate(async () => {
    const w = globalThis as unknown as PageGlobals & { axe: typeof axe }
    const result = await w.axe.run(w.document as unknown as axe.ElementContext, { resultTypes: ['violations'] })
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: v.impact ?? '',
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(' ')),
      }))
  })
}

/**
 * How many CSS pixels the document is wider than the viewport (0 when it does not scroll sideways), with the elements
 * that stick out past the right edge (the innermost ones first), to say where a layout breaks.
 */
export function sidewaysOverflow(page: Page): Promise<{ overflow: number; culprits: string[] }> {
  return page.evaluate(() => {
    const { document } = globalThis as unknown as PageGlobals
    const root = document.documentElement
    const overflow = root.scrollWidth - root.clientWidth
    if (overflow <= 0) return { overflow: 0, culprits: [] }
    const name = (el: PageElement) =>
      `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[data-testid=${el.getAttribute('data-testid')}]` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`
    const culprits = [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 0.5)
      .reverse()
      .slice(0, 5)
      .map((el) => `${name(el)} (right ${Math.round(el.getBoundingClientRect().right)})`)
    return { overflow, culprits }
  })
}

/**
 * Resizes the viewport and waits two animation frames, so ResizeObserver callbacks (uPlot charts resize through one)
 * have run and laid out before anything is measured.
 */
export async function resizeTo(page: Page, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size)
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
}

/**
 * Shows `hash` in a tab that is already signed in, as a page mounted anew: first the Sign in page (it sends no request
 * and leaves the tab's session as it is), then `hash` as a new history entry. A page that only re-rendered with another
 * query would show the previous view's rows, settled, until its own request went out; this one starts loading.
 */
export async function showFresh(page: Page, hash: string): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as PageGlobals).location.replace('#/signin'))
  await page.getByTestId('page-signin').waitFor()
  await page.evaluate((h) => {
    ;(globalThis as unknown as PageGlobals).location.hash = h
  }, hash)
}

/** Saves a full-page screenshot as `artifacts/console/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true })
}

/** What an XSS payload could have left in the page: the flag it sets, elements it would create, CSP reports. */
export function xssTraces(page: Page): Promise<{ flag: unknown; injected: number; csp: string[] }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals
    return {
      flag: w.__xss,
      injected: w.document.querySelectorAll('img[src="x"], script:not([src]), [onerror]').length,
      csp: w.__cspViolations ?? [],
    }
  })
}

/** Waits until the element with the test id (the first one) has exactly this text content. */
export async function waitForText(page: Page, testId: string, text: string, timeout = 15_000): Promise<void> {
  await page
    .waitForFunction(
      ([id, want]) =>
        (globalThis as unknown as PageGlobals).document.querySelector(`[data-testid="${id}"]`)?.textContent === want,
      [testId, text] as const,
      { timeout },
    )
    .catch(async (error: Error) => {
      const got = await page
        .getByTestId(testId)
        .first()
        .textContent({ timeout: 1 })
        .catch(() => '<absent>')
      throw new Error(`[data-testid=${testId}] never read "${text}" (last: "${got}"): ${error.message}`)
    })
}

/** Waits until exactly `count` elements carry the test id. */
export async function waitForCount(page: Page, testId: string, count: number, timeout = 15_000): Promise<void> {
  await page
    .waitForFunction(
      ([id, n]) =>
        (globalThis as unknown as PageGlobals).document.querySelectorAll(`[data-testid="${id}"]`).length === n,
      [testId, count] as const,
      { timeout },
    )
    .catch(async (error: Error) => {
      const got = await page.getByTestId(testId).count()
      throw new Error(`expected ${count} [data-testid=${testId}], found ${got}: ${error.message}`)
    })
}

/** Waits until the text of the element with the test id contains `text`. */
export async function waitForTextContaining(page: Page, testId: string, text: string, timeout = 15_000): Promise<void> {
  await page.waitForFunction(
    ([id, want]) =>
      (globalThis as unknown as PageGlobals).document
        .querySelector(`[data-testid="${id}"]`)
        ?.textContent?.includes(want) === true,
    [testId, text] as const,
    { timeout },
  )
}

/** What the tab keeps: all of localStorage as JSON, and the console's key in sessionStorage. */
export function storedInTab(page: Page): Promise<{ local: string; sessionKey: string | null }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals
    return { local: JSON.stringify({ ...w.localStorage }), sessionKey: w.sessionStorage.getItem('loom.console.key') }
  })
}
