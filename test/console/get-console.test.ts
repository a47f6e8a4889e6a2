import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/meta/get-console/handler'
import { lambdaContext, restEvent } from '../support/events.js'

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

function expectSecurityHeaders(res: Response) {
  expect(res.headers.get('content-security-policy')).toBe(CSP)
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
}

async function indexAssets(): Promise<{ html: string; js: string; css: string }> {
  const html = await (await app.request('/console/')).text()
  const js = /<script type="module" src="([^"]+)"><\/script>/.exec(html)?.[1]
  const css = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1]
  if (js === undefined || css === undefined) throw new Error(`index.html names no script or stylesheet: ${html}`)
  return { html, js, css }
}

describe('GET /console/', () => {
  it('serves the page without credentials, with the CSP and no caching', async () => {
    // Act
    const res = await app.request('/console/')

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expectSecurityHeaders(res)
    const html = await res.text()
    expect(html).toContain('<div id="app"></div>')
    expect(html).toContain('<title>Loom Console</title>')
  })

  it('has no inline script, inline style or third-party URL in the page', async () => {
    // Act
    const { html } = await indexAssets()

    // Assess: every script has a src, no <style> element, no style attribute, nothing outside this origin
    expect(html.match(/<script\b[^>]*>/g)?.every((tag) => /\ssrc="[^"]+"/.test(tag))).toBe(true)
    expect(html).not.toMatch(/<style\b/i)
    expect(html).not.toMatch(/\sstyle=/i)
    expect(html).not.toMatch(/\son[a-z]+=/i)
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i)
  })

  it('answers 304 to a matching If-None-Match', async () => {
    // Prepare
    const etag = (await app.request('/console/')).headers.get('etag') ?? ''

    // Act
    const res = await app.request('/console/', { headers: { 'if-none-match': etag } })

    // Assess
    expect(etag).toMatch(/^".+"$/)
    expect(res.status).toBe(304)
  })
})

describe('GET /console/:file', () => {
  it('serves the hashed script and stylesheet with a year of caching', async () => {
    // Prepare
    const { js, css } = await indexAssets()

    // Act
    const [script, style] = await Promise.all([app.request(`/console/${js}`), app.request(`/console/${css}`)])

    // Assess
    expect(js).toMatch(/^app-[A-Z0-9]+\.js$/)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expectSecurityHeaders(script)
    expect(style.status).toBe(200)
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8')
    // uPlot's own stylesheet is bundled into the console's CSS file (served as a file, not inline).
    expect(await style.text()).toContain('.uplot')
  })

  it('sends gzip when the client accepts it', async () => {
    // Prepare
    const { js } = await indexAssets()
    const plain = await (await app.request(`/console/${js}`)).arrayBuffer()

    // Act
    const res = await app.request(`/console/${js}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } })

    // Assess
    expect(res.headers.get('content-encoding')).toBe('gzip')
    expect(res.headers.get('vary')).toBe('Accept-Encoding')
    const unzipped = await new Response(res.body?.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer()
    expect(Buffer.from(unzipped).equals(Buffer.from(plain))).toBe(true)
  })

  it('serves the API renderer (Swagger UI) from this origin', async () => {
    // Prepare
    const { html } = await indexAssets()
    const js = /<meta name="loom-api-renderer-js" content="([^"]+)">/.exec(html)?.[1]
    const css = /<meta name="loom-api-renderer-css" content="([^"]+)">/.exec(html)?.[1]

    // Act
    const [script, style] = await Promise.all([app.request(`/console/${js}`), app.request(`/console/${css}`)])

    // Assess
    expect(js).toMatch(/^swagger-ui-bundle-[0-9a-f]{8}\.js$/)
    expect(script.status).toBe(200)
    expect(await script.text()).toContain('SwaggerUIBundle')
    expect(style.status).toBe(200)
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8')
  })

  it('answers 404 for an unknown file, still with the security headers', async () => {
    // Act
    const res = await app.request('/console/app-NOPE.js')

    // Assess
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ reason: 'No console file app-NOPE.js' })
    expectSecurityHeaders(res)
  })
})

describe('GET / and GET /console', () => {
  it('redirects a browser from / to the console', async () => {
    // Act
    const res = await app.request('/', { headers: { accept: 'text/html' } })

    // Assess
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/console/')
  })

  it('redirects /console to /console/, so the page resolves its relative asset URLs', async () => {
    const res = await app.request('/console')
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/console/')
  })

  it('keeps the stage in the redirect when invoked by API Gateway', async () => {
    // Act
    const result = await handler(restEvent({ path: '/' }), lambdaContext())

    // Assess
    expect(result.statusCode).toBe(302)
    expect((result.multiValueHeaders as Record<string, string[]> | undefined)?.location).toEqual(['/prod/console/'])
  })

  it('serves the page through the Lambda handler, base64-encoding gzip', async () => {
    // Act
    const result = await handler(
      restEvent({ path: '/console/', headers: { 'accept-encoding': 'gzip' } }),
      lambdaContext(),
    )

    // Assess
    expect(result.statusCode).toBe(200)
    expect(result.isBase64Encoded).toBe(true)
    const { gunzipSync } = await import('node:zlib')
    expect(gunzipSync(Buffer.from(result.body, 'base64')).toString('utf8')).toContain('<div id="app"></div>')
  })
})
