import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { type ConsoleAssets, type ConsoleFile, consoleFile, INDEX } from '#shared/console/files'

// Bundles the browser app under `console/` with esbuild (a devDependency): in memory for `npm start` and the tests,
// into a folder at synth time for the deployed function (`infra/console-bundling.ts`). Nothing built is committed.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const require = createRequire(import.meta.url)

/** `<stem>-<8 hex of sha256>.<ext>`: a content-addressed name, so the file can be cached forever. */
function hashedName(name: string, body: Uint8Array): string {
  const ext = extname(name)
  return `${basename(name, ext)}-${createHash('sha256').update(body).digest('hex').slice(0, 8)}${ext}`
}

/** The one HTML page: only external, same-origin scripts and styles, so the CSP needs no `unsafe-inline`. */
export function indexHtml(assets: { js: string; css: string; apiJs: string; apiCss: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="loom-api-renderer-js" content="${assets.apiJs}">
<meta name="loom-api-renderer-css" content="${assets.apiCss}">
<title>Loom Console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.css}">
<script type="module" src="${assets.js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Loom Console needs JavaScript.</noscript>
</body>
</html>
`
}

/**
 * Builds the console: the app's JS and CSS (minified, content-hashed names), Swagger UI's prebuilt bundle and CSS for
 * the API page (copied from `swagger-ui-dist`, hashed too, loaded only on that page) and `index.html`.
 */
export async function buildConsole(): Promise<ConsoleAssets> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'console/src/main.tsx')],
    outdir: join(ROOT, 'console/dist'),
    entryNames: 'app-[hash]',
    assetNames: 'asset-[hash]',
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(ROOT, 'console/tsconfig.json'),
    legalComments: 'none',
    logLevel: 'silent',
  })
  const files = new Map<string, ConsoleFile>()
  let js = ''
  let css = ''
  for (const out of result.outputFiles) {
    const name = basename(out.path)
    files.set(name, consoleFile(name, out.contents))
    if (name.endsWith('.js')) js = name
    else if (name.endsWith('.css')) css = name
  }
  const swaggerDir = join(require.resolve('swagger-ui-dist/package.json'), '..')
  const api: string[] = []
  for (const source of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    // The source-map comment points at a map that is not served; dropping it keeps the browser from asking for it.
    const text = (await readFile(join(swaggerDir, source), 'utf8')).replace(/\n\/[/*]# sourceMappingURL=\S+\s*$/, '\n')
    const body = new TextEncoder().encode(text)
    const name = hashedName(source, body)
    files.set(name, consoleFile(name, body))
    api.push(name)
  }
  const [apiJs = '', apiCss = ''] = api
  files.set(INDEX, consoleFile(INDEX, new TextEncoder().encode(indexHtml({ js, css, apiJs, apiCss }))))
  return { files, app: [js, css], api }
}

/** Writes a build to `dir` (files plus `manifest.json`), as the deployed function reads it. */
export async function writeConsole(assets: ConsoleAssets, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const f of assets.files.values()) await writeFile(join(dir, f.name), f.body)
  const manifest = { app: assets.app, api: assets.api, files: [...assets.files.keys()] }
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
}

// `tsx shared/console/build.ts <dir>`: run by CDK's bundling hook to ship the console inside the function's asset.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2]
  if (dir === undefined) throw new Error('usage: tsx shared/console/build.ts <output dir>')
  await writeConsole(await buildConsole(), dir)
}
