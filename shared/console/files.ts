import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'

/** One file the console serves, with its gzip-compressed form computed once. */
export type ConsoleFile = {
  name: string
  type: string
  body: Uint8Array
  gzip: Uint8Array
  etag: string
  /** Content-hashed name: cached for a year; `index.html` is revalidated on every load. */
  immutable: boolean
}

/** A built console: every file by name, the app's own JS and CSS (the size budget) and the API renderer's files. */
export type ConsoleAssets = { files: Map<string, ConsoleFile>; app: string[]; api: string[] }

/** The page served at `/console/`. */
export const INDEX = 'index.html'

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
}

/** A file to serve: media type from the extension, gzip (level 9, done once) and a strong ETag from the content. */
export function consoleFile(name: string, body: Uint8Array): ConsoleFile {
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
  return { name, type, body, gzip: gzipSync(body, { level: 9 }), etag, immutable: name !== INDEX }
}

// Where the deployed function finds the console: CDK's bundling hook writes it beside the bundle (`index.mjs`).
const PREBUILT = new URL('./console/', import.meta.url)

let loading: Promise<ConsoleAssets> | undefined

async function readPrebuilt(): Promise<ConsoleAssets | undefined> {
  let manifest: { app: string[]; api: string[]; files: string[] }
  try {
    manifest = JSON.parse(await readFile(new URL('manifest.json', PREBUILT), 'utf8'))
  } catch {
    return undefined
  }
  const files = new Map<string, ConsoleFile>()
  for (const name of manifest.files) {
    files.set(name, consoleFile(name, new Uint8Array(await readFile(new URL(name, PREBUILT)))))
  }
  return { files, app: manifest.app, api: manifest.api }
}

/**
 * The console's files, loaded once per process: from the folder the deployment ships, else built in memory with
 * esbuild (`npm start`, tests). The build module is imported by a computed specifier so that esbuild, bundling this
 * function for Lambda, does not pull esbuild itself into the bundle.
 */
export function consoleAssets(): Promise<ConsoleAssets> {
  loading ??= (async () => {
    const prebuilt = await readPrebuilt()
    if (prebuilt !== undefined) return prebuilt
    const specifier = ['#shared', 'console', 'build'].join('/')
    const { buildConsole } = (await import(/* @vite-ignore */ specifier)) as {
      buildConsole: () => Promise<ConsoleAssets>
    }
    return buildConsole()
  })()
  loading.catch(() => {
    loading = undefined
  })
  return loading
}
