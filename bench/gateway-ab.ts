import { spawnSync } from 'node:child_process'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'
import { LAMBDA_ESBUILD_OPTIONS } from '../infra/bundling.js'
import { processesCpuMs, type StartedServer, startServer, stopServers } from './support/processes.js'
import { benchChatBody, RawHttpClient, rawPost } from './support/raw-http.js'

// An interleaved A/B of Loom's CPU per chat completion: the floor proxy and Loom built from each given source tree
// (this checkout, or another commit exported beside it with `git archive <commit> | tar -x -C <dir>` and its
// node_modules linked), each Loom bundled as deployed with its own dynalite, served side by side. Rounds of 2 s at 64
// in flight take turns, the order rotating every round so that each target holds every slot equally often; with
// taskset, the gateway under test is alone on the last core and the harness on the others. Prints each target's median
// CPU ms per request (its dynalite included, as bench:gateway counts it) and the medians of the per-round ratios.
// Two processes of the very same bundle can differ by 8–10% in CPU per request for their whole life (JIT and code
// placement; an A/A run on 2 × Intel Xeon, 2026-11-28): `--instances=K` serves K processes of each tree, every one a
// target of its own in the rotation, and reports each tree by the median of its instances' medians, so that a
// difference smaller than that spread is not read as a change.
//   npx tsx bench/gateway-ab.ts stream|buffered [rounds] [--instances=K] <source tree>...
const MODE = process.argv[2] === 'buffered' ? 'buffered' : 'stream'
const ROUNDS = Number(process.argv[3] ?? 9)
const INSTANCES_ARG = process.argv.slice(4).find((arg) => arg.startsWith('--instances='))
const INSTANCES = INSTANCES_ARG === undefined ? 1 : Number(INSTANCES_ARG.slice('--instances='.length))
const ROOTS = process.argv
  .slice(4)
  .filter((arg) => !arg.startsWith('--'))
  .map((root) => resolve(root))
if (ROOTS.length === 0 || !(Number.isInteger(INSTANCES) && INSTANCES >= 1)) {
  throw new Error('usage: gateway-ab.ts stream|buffered [rounds] [--instances=K] <source tree>...')
}
const ROUND_S = 2
const CONCURRENCY = 64
const root = process.cwd()
const CORES = os.cpus().length
const PIN = CORES >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0

type Target = { name: string; port: number; pids: number[]; key?: string; tree?: number }

function pin(pid: number, gateway: boolean): void {
  if (!PIN) return
  const cores = gateway ? String(CORES - 1) : CORES === 2 ? '0' : `0-${CORES - 2}`
  spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' })
}

// Starts a server (the gateway under test pinned to its core once it is ready, the rest to the harness's).
async function start(args: string[], cwd: string, gateway: boolean): Promise<StartedServer> {
  const server = await startServer(args, { cwd, env: { LOOM_INFERENCE_TRACING: 'off' } })
  pin(server.pid, gateway)
  return server
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

async function main() {
  pin(process.pid, false)
  const up = await start(['--import', 'tsx', 'bench/support/fast-upstream.ts'], root, false)
  const upstream = `http://127.0.0.1:${(JSON.parse(up.line) as { port: number }).port}/v1`
  const floor = await start(['--import', 'tsx', 'bench/support/floor-proxy.ts', upstream], root, true)
  const targets: Target[] = [
    { name: 'floor', port: (JSON.parse(floor.line) as { port: number }).port, pids: [floor.pid] },
  ]
  for (const [i, tree] of ROOTS.entries()) {
    const outfile = join(root, `node_modules/.cache/loom-bench/loom-ab-${i}.mjs`)
    await build({
      ...LAMBDA_ESBUILD_OPTIONS,
      entryPoints: ['bench/support/loom-server.ts'],
      absWorkingDir: tree,
      outfile,
      logLevel: 'silent',
      external: ['dynalite'],
      sourcemap: false,
    })
    for (let k = 0; k < INSTANCES; k++) {
      const store = await start(['--import', 'tsx', 'bench/support/dynalite-server.ts'], root, false)
      const storeUrl = `http://127.0.0.1:${(JSON.parse(store.line) as { port: number }).port}`
      const loom = await start(['--max-semi-space-size=64', outfile, upstream, storeUrl], tree, true)
      const { port, key } = JSON.parse(loom.line) as { port: number; key: string }
      const name = INSTANCES === 1 ? `Loom ${i + 1} (${tree})` : `Loom ${i + 1}.${k + 1} (${tree})`
      targets.push({ name, port, key, pids: [loom.pid, store.pid], tree: i })
    }
  }
  const body = benchChatBody('bench/fast', MODE === 'stream')
  const round = async (target: Target, seconds: number): Promise<number> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (target.key !== undefined) headers.authorization = `Bearer ${target.key}`
    const bytes = rawPost(target.port, '/v1/chat/completions', headers, body)
    const client = new RawHttpClient(target.port)
    let done = 0
    const before = await processesCpuMs(target.pids)
    const end = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          const { status } = await client.request(bytes)
          if (status !== 200) throw new Error(`${target.name}: HTTP ${status}`)
          done++
        }
      }),
    )
    const after = await processesCpuMs(target.pids)
    client.close()
    return (after - before) / done
  }
  // Warm-up: long enough for the JIT to settle on a busy host.
  for (const target of targets) await round(target, 2 * ROUND_S)
  const perTarget = targets.map(() => [] as number[])
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (r + k) % targets.length
      perTarget[i]?.push(await round(targets[i] as Target, ROUND_S))
    }
  }
  const floorRounds = perTarget[0] ?? []
  const lines = [
    `${MODE}, ${ROUNDS} rounds of ${ROUND_S} s, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  ]
  targets.forEach((target, i) => {
    const rounds = perTarget[i] ?? []
    const ratio = median(rounds.map((ms, r) => ms / (floorRounds[r] ?? Number.NaN)))
    lines.push(
      `${target.name}: ${median(rounds).toFixed(3)} ms CPU per request, ${ratio.toFixed(2)}x the floor (median of ` +
        `rounds); rounds ${rounds.map((ms) => ms.toFixed(3)).join(' ')}`,
    )
  })
  if (INSTANCES === 1) {
    const first = perTarget[1] ?? []
    for (let i = 2; i < targets.length; i++) {
      const ratios = (perTarget[i] ?? []).map((ms, r) => ms / (first[r] ?? Number.NaN))
      lines.push(`${targets[i]?.name} / ${targets[1]?.name}: ${median(ratios).toFixed(3)} (median of rounds)`)
    }
  } else {
    // Each tree: the median of its instances' medians, and their spread.
    const treeMedians = ROOTS.map((tree, t) => {
      const medians = targets.flatMap((target, i) => (target.tree === t ? [median(perTarget[i] ?? [])] : []))
      const value = median(medians)
      lines.push(
        `Loom ${t + 1} (${tree}): ${value.toFixed(3)} ms CPU per request, median of ${medians.length} instances ` +
          `(${Math.min(...medians).toFixed(3)}–${Math.max(...medians).toFixed(3)}), ` +
          `${(value / median(floorRounds)).toFixed(2)}x the floor`,
      )
      return value
    })
    for (let t = 1; t < ROOTS.length; t++) {
      lines.push(
        `Loom ${t + 1} / Loom 1: ${((treeMedians[t] ?? Number.NaN) / (treeMedians[0] ?? Number.NaN)).toFixed(3)}`,
      )
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`)
}

try {
  await main()
} finally {
  stopServers()
}
