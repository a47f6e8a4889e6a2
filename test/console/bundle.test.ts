import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildConsole } from '#shared/console/build'
import type { ConsoleAssets } from '#shared/console/files'

/** The budget: shipped JS + CSS of the console, gzipped, excluding the API renderer. */
const BUDGET_BYTES = 150 * 1024

let assets: ConsoleAssets

beforeAll(async () => {
  assets = await buildConsole()
})

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

describe('console build', () => {
  it('ships JS + CSS within 150 KB gzipped, the API renderer apart', () => {
    // Act
    const app = assets.app.map((name) => assets.files.get(name))
    const gzipped = app.reduce((sum, f) => sum + (f?.gzip.length ?? Number.POSITIVE_INFINITY), 0)

    // Assess
    expect(assets.app).toEqual([expect.stringMatching(/^app-\w+\.js$/), expect.stringMatching(/^app-\w+\.css$/)])
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES)
    expect(assets.api).toEqual([
      expect.stringMatching(/^swagger-ui-bundle-[0-9a-f]{8}\.js$/),
      expect.stringMatching(/^swagger-ui-[0-9a-f]{8}\.css$/),
    ])
  })

  it('writes an index.html with only external same-origin scripts and styles', () => {
    const html = new TextDecoder().decode(assets.files.get('index.html')?.body)
    expect(html).toContain(`<script type="module" src="${assets.app[0]}"></script>`)
    expect(html).toContain(`<link rel="stylesheet" href="${assets.app[1]}">`)
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
  })

  it('references no third-party origin at runtime (XML namespaces aside)', () => {
    for (const name of assets.app) {
      const text = new TextDecoder().decode(assets.files.get(name)?.body)
      const urls = text.match(/https?:\/\/[^\s"'`)]+/g) ?? []
      expect(
        urls.filter((u) => !u.startsWith('http://www.w3.org/')),
        name,
      ).toEqual([])
    }
  })

  it('names files by content, so a rebuild of the same sources serves the same URLs', async () => {
    const again = await buildConsole()
    expect(again.app).toEqual(assets.app)
  })
})

describe('console sources', () => {
  const files = sources(join(import.meta.dirname, '../../console/src'))

  it('never renders a string as HTML nor stores the key outside sessionStorage', () => {
    // Every user-supplied string reaches the DOM as text through Preact; these APIs would parse it as HTML or code,
    // and a cookie or localStorage would outlive the tab.
    const forbidden = [
      'dangerouslySetInnerHTML',
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
      'new Function',
      'localStorage',
      'document.cookie',
    ]
    expect(files.length).toBeGreaterThan(10)
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      for (const word of forbidden) expect(text.includes(word), `${word} in ${file}`).toBe(false)
    }
  })

  it('makes every request through the same-origin API client', () => {
    for (const file of files.filter((f) => !f.endsWith(join('lib', 'api.ts')))) {
      const text = readFileSync(file, 'utf8')
      expect(/\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon/.test(text), file).toBe(false)
    }
  })
})
