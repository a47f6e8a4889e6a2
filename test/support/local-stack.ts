import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** A running `npm start` child process and its base URL. */
export type LocalStack = { url: string; output: () => string; stop: () => Promise<void> }

/**
 * The Node arguments of `npm start` (package.json: `node <flags> --import tsx scripts/start.ts`, one process), with
 * tsx and the script by absolute path: the stack's working directory may be a temporary folder without node_modules.
 */
export function startArgs(root: string): string[] {
  const manifest = join(root, 'package.json')
  const start = (JSON.parse(readFileSync(manifest, 'utf8')) as { scripts: { start: string } }).scripts.start
  const [node, ...args] = start.split(' ')
  if (node !== 'node') throw new Error(`npm start is expected to run node: ${start}`)
  const tsx = pathToFileURL(createRequire(manifest).resolve('tsx')).href
  return args.map((arg, i) =>
    args[i - 1] === '--import' && arg === 'tsx' ? tsx : arg.endsWith('.ts') ? join(root, arg) : arg,
  )
}

/**
 * Runs the real start script as `npm start` does, with extra environment, and waits until it serves. `stop` sends
 * SIGTERM to that process.
 */
export async function startLocalStack(env: Record<string, string>, cwd = process.cwd()): Promise<LocalStack> {
  const root = process.cwd()
  const child: ChildProcess = spawn(process.execPath, startArgs(root), {
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
