import type { Context } from 'hono'
import { consoleAssets, INDEX } from '#shared/console/files'
import { CONSOLE_HEADERS, consoleFileResponse } from '#shared/console/respond'
import type { AppEnv } from '#shared/http/app-env'
import { createPublicApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { route } from './route.js'

const [root, page, asset] = route.routes

// Deployed, API Gateway's stage is part of the URL (`/prod/console/`) but not of the path the function sees.
function consoleUrl(c: Context<AppEnv>): string {
  const stage = c.env?.requestContext?.stage
  return `${typeof stage === 'string' && stage !== '' ? `/${stage}` : ''}/console/`
}

// The page's relative asset URLs resolve under `/console/` only with the trailing slash, so `/` and `/console` redirect.
const redirect = (c: Context<AppEnv>) => c.body(null, 302, { ...CONSOLE_HEADERS, Location: consoleUrl(c) })

async function serveFile(c: Context<AppEnv>, name: string): Promise<Response> {
  const file = (await consoleAssets()).files.get(name)
  if (file === undefined) return c.json({ reason: `No console file ${name}` }, 404, CONSOLE_HEADERS)
  return consoleFileResponse(file, {
    acceptEncoding: c.req.header('accept-encoding'),
    ifNoneMatch: c.req.header('if-none-match'),
  })
}

/**
 * `GET /console/`: the Loom Console, a single page that reads the public API with the user's own key; its hashed
 * assets under `/console/<file>`; `GET /` and `GET /console` redirect a browser there. No credentials: the page is
 * public, its API calls carry the key.
 */
// Strict routing: `/console` redirects to `/console/`, which serves the page (a trailing slash is not the same route).
export const app = createPublicApp({ strict: true })
  .on(root.method, root.path, redirect)
  .on(page.method, page.path, redirect)
  .on(page.method, `${page.path}/`, (c) => serveFile(c, INDEX))
  .on(asset.method, asset.path, (c) => serveFile(c, c.req.param('file')))

export const handler = lambdaHandler(app)
