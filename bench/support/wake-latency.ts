import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { quantile } from './stats.js'

// How late a sleeping thread wakes on this machine, as cyclictest measures it: sleep SLEEP_MS in a futex wait
// (Atomics.wait), over and over, and record how much later than asked each wait returns. On an idle core that is the
// time from the timer's expiry to the thread running again: the kernel's wake-up plus, in a VM, the hypervisor's
// resuming the halted virtual CPU. Every request a gateway serves wakes sleeping processes several times (gateway,
// upstream, gateway again, client), so a host that wakes late now and then shows up in the gateway's tail first.
const SLEEP_MS = 0.5

/** What a run of the probe saw, in ms. */
export type WakeLatency = { waits: number; p50: number; p99: number; max: number; over500us: number; seconds: number }

/** Summarises how late each wait returned (ms past the asked sleep). */
export function summarize(lateMs: number[], seconds: number): WakeLatency {
  return {
    waits: lateMs.length,
    p50: quantile(lateMs, 0.5),
    p99: quantile(lateMs, 0.99),
    max: quantile(lateMs, 1),
    over500us: lateMs.filter((late) => late > 0.5).length,
    seconds,
  }
}

/** Runs the probe in this thread for `seconds`. */
export function measureWakeLatency(seconds: number): WakeLatency {
  const cell = new Int32Array(new SharedArrayBuffer(4))
  const late: number[] = []
  const end = performance.now() + seconds * 1000
  for (let now = performance.now(); now < end; ) {
    Atomics.wait(cell, 0, 0, SLEEP_MS)
    const woke = performance.now()
    late.push(woke - now - SLEEP_MS)
    now = woke
  }
  return summarize(late, seconds)
}

/**
 * Runs the probe on each of `cores` at once, each in a process pinned there with taskset (where there is no taskset,
 * unpinned), and gives what each saw (undefined for a core whose probe failed).
 */
export function probeCores(cores: number[], seconds: number): Promise<(WakeLatency | undefined)[]> {
  const script = fileURLToPath(import.meta.url)
  const pinned = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
  return Promise.all(
    cores.map(
      (core) =>
        new Promise<WakeLatency | undefined>((resolve) => {
          const probe = [process.execPath, '--import', 'tsx', script, String(seconds)]
          const [command = process.execPath, ...args] = pinned ? ['taskset', '-c', String(core), ...probe] : probe
          const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] })
          let out = ''
          child.stdout.on('data', (piece: Buffer) => {
            out += String(piece)
          })
          child.on('error', () => resolve(undefined))
          child.on('close', () => {
            try {
              resolve(JSON.parse(out) as WakeLatency)
            } catch {
              resolve(undefined)
            }
          })
        }),
    ),
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(measureWakeLatency(Number(process.argv[2] ?? 1)))}\n`)
}
