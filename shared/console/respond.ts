import type { ConsoleFile } from '#shared/console/files'

/**
 * Headers on every console answer. The CSP allows only same-origin scripts, styles and requests: no inline script or
 * style (uPlot and Swagger UI set element styles through the CSSOM, which `style-src` does not restrict), no framing.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}

const YEAR = 'public, max-age=31536000, immutable'

/**
 * The answer for one console file: gzip when the client accepts it (behind API Gateway, which does not compress,
 * this is what keeps the transfer small), 304 for a matching `If-None-Match`, a year of caching for hashed names and
 * revalidation for `index.html`.
 */
export function consoleFileResponse(
  file: ConsoleFile,
  request: { acceptEncoding: string | undefined; ifNoneMatch: string | undefined },
): Response {
  const headers: Record<string, string> = {
    ...CONSOLE_HEADERS,
    'Content-Type': file.type,
    'Cache-Control': file.immutable ? YEAR : 'no-cache',
    ETag: file.etag,
    Vary: 'Accept-Encoding',
  }
  if (request.ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)) {
    return new Response(null, { status: 304, headers })
  }
  const gzip = /\bgzip\b/.test(request.acceptEncoding ?? '')
  if (gzip) headers['Content-Encoding'] = 'gzip'
  return new Response(gzip ? file.gzip : file.body, { status: 200, headers })
}
