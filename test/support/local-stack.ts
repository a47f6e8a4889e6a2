import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** A running `npm start` child process and its base URL. */
export type LocalStack = { url: string; output: () => string; stop: () => Promise<void> }

/**
 * Runs the real start script as `npm start` does (one Node process, tsx as its loader: `node --import tsx
 * scripts/start.ts`) with extra environment, and waits until it serves. `stop` sends SIGTERM to that process.
 */
export async function startLocalStack(env: Record<string, string>, cwd = process.cwd()): Promise<LocalStack> {
  const root = process.cwd()
  // tsx by absolute URL: the stack's working directory may be a temporary folder without node_modules.
  const tsx = pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href
  const args = ['--max-semi-space-size=64', '--import', tsx, join(root, 'scripts/start.ts')]
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, PORT: '0', POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (chunk) => {
    out += String(chunk)
  })
  child.stderr?.on('data', (chunk) => {
    out += String(chunk)
  })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`start timed out:\n${out}`)), 60_000)
    const check = () => {
      const match = /Health:\s+(http:\/\/\S+)\/health/.exec(out)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout?.on('data', check)
    child.once('exit', (code) => reject(new Error(`start exited with ${code}:\n${out}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  return { url, output: () => out, stop }
}
