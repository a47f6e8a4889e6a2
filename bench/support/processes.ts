import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { cpus } from 'node:os'

// The bench's servers (upstream, dynalite, gateways), each a Node process of its own, and what they cost.

const servers: ChildProcess[] = []

export type ServerOptions = {
  /** Working directory (the repository root by default). */
  cwd?: string
  /** Added to this process's environment, after the bench's defaults (logs silenced, NODE_ENV=production). */
  env?: Record<string, string>
  /** Which output line says the server is ready; by default its first JSON line (`{…}`, e.g. its port). */
  ready?: (line: string) => boolean
}

/** A started server: the line that said it was ready, the child and its pid. */
export type StartedServer = { line: string; child: ChildProcess; pid: number }

/**
 * Starts `node <args>` and resolves once a line of its stdout is `ready`; rejects with its output if it exits first or
 * is not ready within 60 s. `stopServers` ends every server started so.
 */
export function startServer(args: string[], options: ServerOptions = {}): Promise<StartedServer> {
  const ready = options.ready ?? ((line: string) => line.startsWith('{'))
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', NODE_ENV: 'production', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  servers.push(child)
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${out}`)), 60_000)
    child.stdout?.on('data', (piece: Buffer) => {
      out += String(piece)
      const line = out.split('\n').find(ready)
      if (line === undefined) return
      clearTimeout(timer)
      resolve({ line, child, pid: child.pid ?? 0 })
    })
    child.stderr?.on('data', (piece: Buffer) => {
      out += String(piece)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`))
    })
  })
}

/** Ends every server `startServer` started. */
export function stopServers(): void {
  for (const child of servers) child.kill('SIGTERM')
}

/** CPU milliseconds a process has used so far, user and system, from /proc (Linux); NaN elsewhere. */
export async function processCpuMs(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)
  if (stat === undefined) return { user: Number.NaN, system: Number.NaN }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime, in clock ticks of 10 ms.
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
}

/** CPU milliseconds the processes have used so far together, user and system; NaN without /proc. */
export async function processesCpuMs(pids: readonly number[]): Promise<number> {
  const used = await Promise.all(pids.map(processCpuMs))
  return used.reduce((sum, { user, system }) => sum + user + system, 0)
}

/** The host's CPU model (/proc/cpuinfo, else Node's view), written next to every run's figures. */
export function cpuModel(): string {
  let info = ''
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8')
  } catch {
    // Not Linux: Node's own view below.
  }
  const line = info.split('\n').find((l) => l.startsWith('model name'))
  return line?.split(':')[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
}
