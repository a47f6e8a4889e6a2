import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import type { Hono } from 'hono'
import { FUNCTIONS } from '#functions/manifest'
import { createLocalApp } from '../../scripts/local/app.js'

/** The tracing functions served over loopback HTTP, recording every non-2xx answer (the SDK retries 5xx for hours). */
export type TracingServer = { app: Hono; url: string; failures: string[]; close: () => Promise<void> }

/** Serves every tracing function of the manifest on 127.0.0.1 (a free port), as the local server does. */
export async function serveTracing(): Promise<TracingServer> {
  return serveApp(await createLocalApp(FUNCTIONS.filter((f) => f.family === 'tracing')))
}

/**
 * Serves `app` (the local stack, or part of it) on 127.0.0.1 at a free port, recording every answer of status 300 or
 * more with its body in `failures` (a test reads them to explain a failure).
 */
export async function serveApp(app: Hono): Promise<TracingServer> {
  const failures: string[] = []
  const server = serve({
    fetch: async (request) => {
      const res = await app.fetch(request)
      if (res.status >= 300) {
        failures.push(`${request.method} ${new URL(request.url).pathname} ${res.status} ${await res.clone().text()}`)
      }
      return res
    },
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise((resolve) => server.once('listening', resolve))
  return {
    app,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failures,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/**
 * Runs a CommonJS script in a child process (docs/tracing.md §16.4: the SDK keeps a global client and batch timers)
 * with a temporary working folder and `WEAVE_PATH`/`OPENAI_PATH` pointing at the installed packages; killed after
 * `timeoutMs`. Resolves the JSON object of the first stdout line that starts with `{`, or rejects with the exit code,
 * the server's non-2xx answers and the child's stderr.
 */
export function runWeaveScript<T>(
  script: string,
  server: TracingServer,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<T> {
  const require = createRequire(import.meta.url)
  const cwd = mkdtempSync(join(tmpdir(), 'loom-weave-'))
  const child = spawn(process.execPath, ['-e', script], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      WEAVE_PATH: require.resolve('weave'),
      OPENAI_PATH: require.resolve('openai'),
      WF_TRACE_SERVER_URL: server.url,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += String(d)
  })
  child.stderr.on('data', (d) => {
    err += String(d)
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      rmSync(cwd, { recursive: true, force: true })
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (code !== 0 || server.failures.length > 0 || line === undefined) {
        reject(new Error(`weave SDK run failed (exit ${code}):\n${server.failures.join('\n')}\n${err}`))
      } else resolve(JSON.parse(line) as T)
    })
  })
}
