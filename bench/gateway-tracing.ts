import { cpus } from 'node:os'
import { join } from 'node:path'
import { bundleAsDeployed } from './support/bundle.js'
import { cpuModel, processesCpuMs, type StartedServer, startServer, stopServers } from './support/processes.js'
import { loomChatRequest, RawHttpClient } from './support/raw-http.js'

// What tracing every completion costs the long-running server (`npm start` traces by default): N completions through
// Loom's chat function (bundled as deployed) at 64 in flight, with tracing off and on, the fast upstream and a dynalite
// (the embedded store) each in a process of its own. A run ends once the traces are stored: after the last answer the
// bench waits until Loom and the store have been idle for a while. Prints completions per second over that span and
// the CPU per completion of Loom and of the store.
//   npx tsx bench/gateway-tracing.ts [completions per mode, 3000]
const N = Number(process.argv[2] ?? 3000)
const CONCURRENCY = 64
const WARM_UP = 500
// Idle: less than this much CPU (ms, Loom and the store together) over one poll.
const IDLE_CPU_MS = 5
const POLL_MS = 200
const root = process.cwd()

type Mode = 'buffered' | 'stream'
type Reading = { mode: Mode; tracing: boolean; rps: number; drainS: number; loomMs: number; storeMs: number }

const cpuOf = (servers: StartedServer[]) => Promise.all(servers.map((s) => processesCpuMs([s.pid])))

/** Waits until the servers' CPU over a poll stays under IDLE_CPU_MS; returns their CPU then. */
async function idle(servers: StartedServer[]): Promise<number[]> {
  let last = await cpuOf(servers)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    const now = await cpuOf(servers)
    if (now.reduce((sum, v, i) => sum + v - (last[i] ?? 0), 0) < IDLE_CPU_MS) return now
    last = now
  }
}

async function measure(bundle: string, upstreamPort: number, mode: Mode, tracing: boolean): Promise<Reading> {
  const env = { env: { LOOM_INFERENCE_TRACING: tracing ? 'on' : 'off' } }
  const store = await startServer(['--import', 'tsx', 'bench/support/dynalite-server.ts'], env)
  const storePort = (JSON.parse(store.line) as { port: number }).port
  const loom = await startServer(
    ['--max-semi-space-size=64', bundle, `http://127.0.0.1:${upstreamPort}/v1`, `http://127.0.0.1:${storePort}`],
    env,
  )
  const { port, key } = JSON.parse(loom.line) as { port: number; key: string }
  const bytes = loomChatRequest(port, key, mode === 'stream')
  const client = new RawHttpClient(port)
  const run = async (n: number) => {
    let left = n
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) {
          const t = await client.request(bytes)
          if (t.status !== 200) throw new Error(`HTTP ${t.status}`)
        }
      }),
    )
  }
  const servers = [loom, store]
  await run(WARM_UP)
  const before = await idle(servers)
  const started = performance.now()
  await run(N)
  const answered = performance.now()
  const after = await idle(servers)
  // The last poll found them idle: the work ended at most one poll before it.
  const ended = performance.now() - POLL_MS
  client.close()
  for (const s of servers) s.child.kill('SIGTERM')
  const [loomMs, storeMs] = after.map((v, i) => (v - (before[i] ?? 0)) / N)
  return {
    mode,
    tracing,
    rps: N / ((ended - started) / 1000),
    drainS: Math.max(0, (ended - answered) / 1000),
    loomMs: loomMs ?? Number.NaN,
    storeMs: storeMs ?? Number.NaN,
  }
}

async function main() {
  const upstream = await startServer(['--import', 'tsx', 'bench/support/fast-upstream.ts'])
  const upstreamPort = (JSON.parse(upstream.line) as { port: number }).port
  const bundle = await bundleAsDeployed(
    'bench/support/loom-server.ts',
    join(root, 'node_modules/.cache/loom-bench/loom-tracing.mjs'),
    { external: ['dynalite'], sourcemap: false },
  )
  process.stdout.write(
    `Run: ${new Date().toISOString()}, CPU ${cpuModel()} (${cpus().length} cores), Node ${process.version}; ` +
      `${N} completions per row, ${CONCURRENCY} in flight\n\n` +
      '| mode | tracing | completions/s, traces stored | traces stored after the last answer | Loom CPU ms per completion | store CPU ms per completion |\n' +
      '|---|---|---|---|---|---|\n',
  )
  for (const mode of ['buffered', 'stream'] as const) {
    for (const tracing of [false, true]) {
      const r = await measure(bundle, upstreamPort, mode, tracing)
      process.stdout.write(
        `| ${r.mode} | ${r.tracing ? 'on' : 'off'} | ${r.rps.toFixed(0)} | ${r.drainS.toFixed(1)} s | ${r.loomMs.toFixed(3)} | ${r.storeMs.toFixed(3)} |\n`,
      )
    }
  }
}

try {
  await main()
} finally {
  stopServers()
}
