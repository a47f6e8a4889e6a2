import { spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { bundleAsDeployed } from './support/bundle.js'
import {
  processesCpuMs,
  type ServerOptions,
  type StartedServer,
  startServer,
  stopServers,
} from './support/processes.js'
import { benchChatBody, RawHttpClient, rawPost } from './support/raw-http.js'
import { quantile } from './support/stats.js'
import { probeCores } from './support/wake-latency.js'

// `npm run bench:gateway`: Loom's chat-completions gateway against a fast loopback upstream, beside the same load
// sent straight to the upstream, through the floor (the smallest honest Node proxy: support/floor-proxy.ts) and
// through Portkey's open-source gateway (routed to the same upstream). Each server
// runs in its own process; this process only generates load. Loom runs as deployed (the esbuild bundle of
// infra/bundling.ts), as Portkey runs its published build.
//   throughput: closed loop, CONCURRENCY requests in flight for THROUGHPUT_S seconds per target, ROUNDS rounds with
//               the targets taking turns (the machine is shared: its speed drifts, and every target sees the same
//               drift); the median round is reported;
//   latency:    open loop at RATE requests/s for LATENCY_S one-second slices per target, the targets taking turns,
//               each slice after 100 ms at the rate that is not recorded;
//               added latency = gateway minus direct;
//   streaming:  the same open loop with `stream: true`, time to first body byte and to the end of the stream.
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const THROUGHPUT_S = Number(process.env.BENCH_THROUGHPUT_S ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
const RATE = Number(process.env.BENCH_RATE ?? 500)
const LATENCY_S = Number(process.env.BENCH_LATENCY_S ?? 10)
const WRITE_DOCS = process.env.BENCH_WRITE_DOCS !== '0'

type Target = {
  name: string
  port: number
  path: string
  headers: Record<string, string>
  model: string
  /** Processes serving the target (their CPU time is what a request costs, whatever else runs on the machine). */
  pids: number[]
}
type Sample = { ttfb: number; total: number }

// Failed requests by target, mode and reason, all listed under the table.
const failures = new Map<string, number>()

function noteFailure(target: Target, stream: boolean, error: unknown): void {
  const key = `${target.name} ${stream ? 'streaming' : 'non-streaming'}: ${(error as Error).message ?? String(error)}`
  failures.set(key, (failures.get(key) ?? 0) + 1)
}

const root = process.cwd()

// The machine's steal and total CPU time so far (/proc/stat, Linux; NaN elsewhere): time the hypervisor gave this
// VM's CPUs to others. Shared hosts steal in bursts, and a burst during a phase slows whatever that phase measures.
async function machineTime(): Promise<{ steal: number; total: number }> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => undefined)
  const fields = (stat?.split('\n')[0] ?? '').split(/\s+/).slice(1, 9).map(Number)
  if (fields.length < 8) return { steal: Number.NaN, total: Number.NaN }
  return { steal: fields[7] ?? Number.NaN, total: fields.reduce((a, b) => a + b, 0) }
}

/** Runs a phase and gives the share of the machine's CPU time stolen during it, in percent. */
async function withSteal<T>(phase: () => Promise<T>): Promise<[T, number]> {
  const before = await machineTime()
  const result = await phase()
  const after = await machineTime()
  return [result, ((after.steal - before.steal) * 100) / (after.total - before.total)]
}

// Throughput rounds: where taskset exists (Linux) and the machine has two cores or more, the gateway under test gets
// the last core to itself and the harness (this load generator, the upstream, DynamoDB's stand-in) the others, as a
// gateway in production does not share its machine with its clients; otherwise the scheduler lets the load generator
// preempt the gateway, and a faster gateway, which keeps the harness busier, loses more to it. Both gateways are single
// Node processes, so each gets exactly one core. Latency slices run unpinned (the scheduler's own placement), as they
// measure time added to a request, not capacity. `BENCH_PIN=0` turns pinning off.
const CORES = os.cpus().length
const PIN =
  process.env.BENCH_PIN !== '0' && CORES >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
const GATEWAY_CORE = String(CORES - 1)
const HARNESS_CORES = CORES === 2 ? '0' : `0-${CORES - 2}`
const ALL_CORES = `0-${CORES - 1}`
type Role = 'gateway' | 'harness'
const roles = new Map<number, Role>()

/** Pins every server and this process (all their threads: -a) to its role's cores, or frees them all. */
function pin(on: boolean): void {
  if (!PIN) return
  const cores = (role: Role) => (!on ? ALL_CORES : role === 'gateway' ? GATEWAY_CORE : HARNESS_CORES)
  for (const [pid, role] of [...roles, [process.pid, 'harness'] as const]) {
    spawnSync('taskset', ['-a', '-p', '-c', cores(role), String(pid)], { stdio: 'ignore' })
  }
}

async function start(role: Role, args: string[], options: ServerOptions = {}): Promise<StartedServer> {
  const server = await startServer(args, options)
  roles.set(server.pid, role)
  return server
}

// The load generator shares the machine with the servers, so it costs as little as it can: prebuilt request bytes on
// keep-alive sockets (support/raw-http.ts), about a third of undici's dispatch API per request.
const clients = new Map<number, RawHttpClient>()
// Every target is asked the same thing, so each request is built once.
const requests = new Map<string, Buffer>()

function requestBytes(target: Target, stream: boolean): Buffer {
  const key = `${target.name} ${stream}`
  let bytes = requests.get(key)
  if (bytes === undefined) {
    const body = benchChatBody(target.model, stream)
    bytes = rawPost(target.port, target.path, { 'content-type': 'application/json', ...target.headers }, body)
    requests.set(key, bytes)
  }
  return bytes
}

async function request(target: Target, stream: boolean): Promise<Sample> {
  let client = clients.get(target.port)
  if (client === undefined) {
    client = new RawHttpClient(target.port)
    clients.set(target.port, client)
  }
  const timing = await client.request(requestBytes(target, stream))
  if (timing.status !== 200) {
    throw new Error(`HTTP ${timing.status}`)
  }
  return timing
}

async function throughput(target: Target, stream: boolean, seconds = THROUGHPUT_S) {
  const [round, steal] = await withSteal(async () => {
    const cpuBefore = await processesCpuMs(target.pids)
    let done = 0
    let errors = 0
    const end = performance.now() + seconds * 1000
    const worker = async () => {
      while (performance.now() < end) {
        try {
          await request(target, stream)
          done++
        } catch (error) {
          errors++
          noteFailure(target, stream, error)
        }
      }
    }
    const started = performance.now()
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const cpuMsPerRequest = done === 0 ? Number.NaN : ((await processesCpuMs(target.pids)) - cpuBefore) / done
    return { rps: done / ((performance.now() - started) / 1000), errors, cpuMsPerRequest }
  })
  return { ...round, steal }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function fixedRate(target: Target, stream: boolean, rate: number, seconds: number) {
  const samples: Sample[] = []
  let errors = 0
  const pending: Promise<void>[] = []
  const interval = 1000 / rate
  const count = Math.round(rate * seconds)
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const wait = started + i * interval - performance.now()
    if (wait >= 1) await sleep(wait)
    pending.push(
      request(target, stream).then(
        (s) => {
          samples.push(s)
        },
        (error: unknown) => {
          errors++
          noteFailure(target, stream, error)
        },
      ),
    )
  }
  await Promise.all(pending)
  return { samples, errors }
}

const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')

async function main() {
  // One node process per server (tsx as a loader, not its CLI wrapper), so /proc shows each server's own CPU time.
  const upStart = await start('harness', ['--import', 'tsx', 'bench/support/fast-upstream.ts'])
  const up = JSON.parse(upStart.line) as { port: number }
  const upstreamBase = `http://127.0.0.1:${up.port}/v1`
  const storeStart = await start('harness', ['--import', 'tsx', 'bench/support/dynalite-server.ts'])
  const store = JSON.parse(storeStart.line) as { port: number }
  const loomBundle = await bundleAsDeployed(
    'bench/support/loom-server.ts',
    join(root, 'node_modules/.cache/loom-bench/loom-server.mjs'),
    // Only loaded without a DynamoDB endpoint, which the bench always gives.
    { external: ['dynalite'], sourcemap: false },
  )
  const loomStart = await start(
    'gateway',
    // The young-generation size `npm start` gives the server (package.json): a gateway allocates per request, and a
    // larger young generation means fewer scavenges of short-lived request objects.
    ['--max-semi-space-size=64', loomBundle, upstreamBase, `http://127.0.0.1:${store.port}`],
    { env: { LOOM_INFERENCE_TRACING: process.env.BENCH_TRACING === '1' ? 'on' : 'off' } },
  )
  const loom = JSON.parse(loomStart.line) as { port: number; key: string }
  const floorStart = await start('gateway', ['--import', 'tsx', 'bench/support/floor-proxy.ts', upstreamBase])
  const floor = JSON.parse(floorStart.line) as { port: number }
  const portkeyPort = 18_000 + Math.floor(Math.random() * 2_000)
  const portkeyStart = await start(
    'gateway',
    ['node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${portkeyPort}`, '--headless'],
    { ready: (l) => l.includes('Ready for connections') },
  )

  const direct: Target = {
    name: 'direct',
    port: up.port,
    path: '/v1/chat/completions',
    headers: {},
    model: 'bench/fast',
    pids: [upStart.pid],
  }
  const targets: Target[] = [
    direct,
    {
      name: 'floor',
      port: floor.port,
      path: '/v1/chat/completions',
      headers: {},
      model: 'bench/fast',
      pids: [floorStart.pid],
    },
    {
      name: 'Loom',
      port: loom.port,
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${loom.key}` },
      model: 'bench/fast',
      // DynamoDB's stand-in counts as Loom's: what it does (key and catalog look-ups, usage counters) is Loom's cost.
      pids: [loomStart.pid, storeStart.pid],
    },
    {
      name: 'Portkey',
      port: portkeyPort,
      path: '/v1/chat/completions',
      headers: {
        authorization: 'Bearer unused',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': upstreamBase,
      },
      model: 'bench/fast',
      pids: [portkeyStart.pid],
    },
  ]

  for (const t of targets) {
    await throughput(t, false, 1)
    await throughput(t, true, 1)
  }

  const rows: string[] = []
  const results: Record<string, Record<string, number>> = {}
  const ratios: string[] = []
  const wakeups: string[] = []
  // The worst core's wake-up p99 before each mode's latency slices (ms): the p99 target applies below 0.2 ms.
  const wakeP99: Record<string, number> = {}
  for (const stream of [false, true]) {
    const mode = stream ? 'streaming' : 'non-streaming'
    const rounds = new Map<Target, Awaited<ReturnType<typeof throughput>>[]>(targets.map((t) => [t, []]))
    pin(true)
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) rounds.get(t)?.push(await throughput(t, stream))
    }
    pin(false)
    // Each round's ratio with the steal during Loom's and Portkey's turns, so a round the hypervisor hit shows.
    const byName = (name: string) => targets.find((t) => t.name === name) as Target
    const perRound = (rounds.get(byName('Loom')) ?? []).map((loomRound, i) => {
      const portkeyRound = rounds.get(byName('Portkey'))?.[i]
      if (portkeyRound === undefined) return 'n/a'
      return `${f(loomRound.rps / portkeyRound.rps, 1)} (${f(loomRound.steal, 0)}/${f(portkeyRound.steal, 0)}%)`
    })
    ratios.push(`${mode} ${perRound.join(', ')}`)
    // The host's wake-up latency just before the latency slices, every server idle: what a sleeping process waits
    // beyond its timer on each core, the hazard every hop of a request is exposed to.
    if (PIN) {
      const probes = await probeCores(
        Array.from({ length: CORES }, (_, core) => core),
        1,
      )
      wakeP99[mode] = Math.max(...probes.map((p) => p?.p99 ?? Number.POSITIVE_INFINITY))
      wakeups.push(
        `${mode} ${probes
          .map((p, core) =>
            p === undefined
              ? `core ${core} n/a`
              : `core ${core} p50 ${f(p.p50, 3)} / p99 ${f(p.p99, 3)} / max ${f(p.max)} ms, ${p.over500us} of ${p.waits} over 0.5 ms`,
          )
          .join(', ')}`,
      )
    }
    const latencies: Record<
      string,
      { p50: number; p99: number; ttfb50: number; ttfb99: number; errors: number; stealTp: number; stealLat: number }
    > = {}
    // Latency in 1 s slices with the targets taking turns, so the gateways and the direct baseline they are compared
    // with meet the same moments of the shared host (a stall then lands in every target's tail, not in one).
    const open = new Map(targets.map((t) => [t, { samples: [] as Sample[], errors: 0, steal: [] as number[] }]))
    for (let slice = 0; slice < LATENCY_S; slice++) {
      for (const t of targets) {
        // The target sat idle through the others' slices; the first 100 ms at the rate are not recorded, so a slice
        // measures the steady rate and not the wake-up after a pause that steady traffic never has.
        await fixedRate(t, stream, RATE, 0.1)
        const [{ samples, errors }, steal] = await withSteal(() => fixedRate(t, stream, RATE, 1))
        const into = open.get(t)
        into?.samples.push(...samples)
        into?.steal.push(steal)
        if (into !== undefined) into.errors += errors
      }
    }
    for (const t of targets) {
      const all = rounds.get(t) ?? []
      const tp = {
        rps: quantile(
          all.map((r) => r.rps),
          0.5,
        ),
        cpuMsPerRequest: quantile(
          all.map((r) => r.cpuMsPerRequest),
          0.5,
        ),
        errors: all.reduce((n, r) => n + r.errors, 0),
        steal: quantile(
          all.map((r) => r.steal),
          0.5,
        ),
      }
      const { samples, errors, steal } = open.get(t) ?? { samples: [], errors: 0, steal: [] }
      const latencySteal = steal.reduce((a, b) => a + b, 0) / steal.length
      const totals = samples.map((s) => s.total)
      const ttfbs = samples.map((s) => s.ttfb)
      latencies[t.name] = {
        p50: quantile(totals, 0.5),
        p99: quantile(totals, 0.99),
        ttfb50: quantile(ttfbs, 0.5),
        ttfb99: quantile(ttfbs, 0.99),
        errors: errors + tp.errors,
        stealTp: tp.steal,
        stealLat: latencySteal,
      }
      results[`${t.name} ${mode}`] = { rps: tp.rps, cpu: tp.cpuMsPerRequest, ...latencies[t.name] }
      process.stderr.write(`${t.name} ${mode}: ${f(tp.rps, 0)} req/s, p50 ${f(quantile(totals, 0.5))} ms\n`)
    }
    const base = latencies.direct
    for (const t of targets) {
      const r = results[`${t.name} ${mode}`]
      const l = latencies[t.name]
      if (r === undefined || l === undefined || base === undefined) continue
      const added = (a: number, b: number) => (t.name === 'direct' ? '–' : f(a - b))
      rows.push(
        `| ${mode} | ${t.name} | ${f(r.rps ?? 0, 0)} | ${f(r.cpu ?? Number.NaN, 3)} | ${f(1000 / (r.cpu ?? Number.NaN), 0)} | ${f(l.p50)} | ${f(l.p99)} | ${added(l.p50, base.p50)} | ${added(l.p99, base.p99)} | ` +
          `${stream ? `${f(l.ttfb50)} / ${f(l.ttfb99)}` : '–'} | ${stream ? added(l.ttfb50, base.ttfb50) : '–'} | ${stream ? added(l.ttfb99, base.ttfb99) : '–'} | ${l.errors} | ${f(l.stealTp, 0)} / ${f(l.stealLat, 0)} |`,
      )
    }
  }
  const loomRps = results['Loom non-streaming']?.rps ?? 0
  const cpu = (name: string, mode: string) => results[`${name} ${mode}`]?.cpu ?? Number.NaN
  const addedP = (name: string, mode: string, key: 'p99' | 'ttfb50') =>
    (results[`${name} ${mode}`]?.[key] ?? Number.NaN) - (results[`direct ${mode}`]?.[key] ?? Number.NaN)
  const floorRatio = {
    buffered: cpu('Loom', 'non-streaming') / cpu('floor', 'non-streaming'),
    streamed: cpu('Loom', 'streaming') / cpu('floor', 'streaming'),
  }
  const verdict = (ok: boolean) => (ok ? 'met' : 'not met')
  const p99Applies = (wakeP99['non-streaming'] ?? Number.POSITIVE_INFINITY) < 0.2
  const targetsLine =
    `Targets: server CPU per request ≤ 2× the floor's: ${f(floorRatio.buffered)}× non-streaming, ${f(floorRatio.streamed)}× streaming (${verdict(floorRatio.buffered <= 2 && floorRatio.streamed <= 2)}); ` +
    `throughput ≥ 10× Portkey's: ${f(loomRps / (results['Portkey non-streaming']?.rps ?? 0), 1)}× (${verdict(loomRps / (results['Portkey non-streaming']?.rps ?? 0) >= 10)}); ` +
    `added p99 ≤ 2 ms at ${RATE} req/s when the host's wake-up p99 < 0.2 ms: ${f(addedP('Loom', 'non-streaming', 'p99'))} ms with the worst core's wake-up p99 ${f(wakeP99['non-streaming'] ?? Number.NaN, 3)} ms (${p99Applies ? verdict(addedP('Loom', 'non-streaming', 'p99') <= 2) : 'not applicable on this host'}); ` +
    `streaming added first byte p50 ≤ 1 ms: ${f(addedP('Loom', 'streaming', 'ttfb50'))} ms (${verdict(addedP('Loom', 'streaming', 'ttfb50') <= 1)}). ` +
    `The floor's own added p99: ${f(addedP('floor', 'non-streaming', 'p99'))} ms, first byte p50 ${f(addedP('floor', 'streaming', 'ttfb50'))} ms.`
  const portkeyRps = results['Portkey non-streaming']?.rps ?? 0
  const loomStreamRps = results['Loom streaming']?.rps ?? 0
  const portkeyStreamRps = results['Portkey streaming']?.rps ?? 0
  const table = [
    `Run ${new Date().toISOString()} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'} (load average ` +
      `${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at the end, the machine is shared), Node ${process.version}; ` +
      `throughput: ${CONCURRENCY} in flight for ${THROUGHPUT_S} s per target and round, median of ${ROUNDS} rounds ` +
      `(Loom / Portkey per round, with the host's steal during Loom's / Portkey's turn: ${ratios.join('; ')}); latency: open loop at ${RATE} req/s, ${LATENCY_S} slices of 1 s per target taking turns, each after 100 ms unrecorded; ` +
      `${wakeups.length > 0 ? `host wake-up latency before the latency slices (0.5 ms futex sleeps for 1 s on every core at once, servers idle): ${wakeups.join('; ')}; ` : ''}` +
      `${PIN ? `throughput with the gateway under test alone on core ${GATEWAY_CORE}, load generator, upstream and dynalite on ${HARNESS_CORES}, latency unpinned` : 'no core pinning'}; ` +
      `tracing ${process.env.BENCH_TRACING === '1' ? 'on' : 'off'} (Loom's DynamoDB is a dynalite in a process of its own, its CPU time counted as Loom's).`,
    '',
    '| mode | target | throughput (req/s) | server CPU ms / request | req/s per CPU core | p50 (ms) | p99 (ms) | added p50 (ms) | added p99 (ms) | first byte p50 / p99 (ms) | added first byte p50 (ms) | added first byte p99 (ms) | errors | host steal % (throughput / latency) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Loom / Portkey throughput: ${f(loomRps / portkeyRps, 1)}× non-streaming, ${f(loomStreamRps / portkeyStreamRps, 1)}× streaming; ` +
      `per CPU core (server CPU time per request): ${f((results['Portkey non-streaming']?.cpu ?? Number.NaN) / (results['Loom non-streaming']?.cpu ?? Number.NaN), 1)}× non-streaming, ` +
      `${f((results['Portkey streaming']?.cpu ?? Number.NaN) / (results['Loom streaming']?.cpu ?? Number.NaN), 1)}× streaming.`,
    targetsLine,
    ...(failures.size === 0
      ? []
      : ['', `Failed requests: ${[...failures].map(([reason, n]) => `${reason} (${n})`).join('; ')}.`]),
  ].join('\n')
  process.stdout.write(`${table}\n`)
  if (WRITE_DOCS) await writeSection(table)
}

const GENERATED_END = '<!-- bench:gateway replaces the text above this line; what follows is kept. -->'

async function writeSection(table: string) {
  const file = join(root, 'docs/benchmarks.md')
  const current = await readFile(file, 'utf8').catch(() => '# Benchmarks\n')
  const heading = '## Inference gateway'
  const about = [
    '`npm run bench:gateway` (bench/gateway.ts). Three servers, each its own Node process on loopback: a fast',
    "OpenAI/vLLM-compatible upstream with fixed answers (10 tokens; streams send the role chunk, then the rest), Loom's",
    'chat-completions function served by `@hono/node-server` (keys, catalog and usage counters in a dynalite of its own',
    "process, as DynamoDB is a remote service in production; its CPU time is counted as Loom's), and Portkey's",
    'open-source gateway (`@portkey-ai/gateway`, `x-portkey-provider: openai`,',
    '`x-portkey-custom-host` = the same upstream). Loom runs as deployed, from the esbuild bundle of',
    '`infra/bundling.ts` (minified ESM), as Portkey runs its published build. "direct" is the upstream without a',
    'gateway; "floor" is the smallest honest Node proxy for the same traffic (`bench/support/floor-proxy.ts`: a',
    '`node:http` server that forwards the body through an undici pool and pipes the answer back, with no validation,',
    "auth, metering or tracing), the yardstick for what Loom's rules cost per request on whichever host runs the bench.",
    '"added" = gateway minus direct at the same percentile. Throughput is measured in rounds, the targets',
    "taking turns, and each target's median round is reported; latency likewise in one-second slices, the targets",
    'taking turns: the machine is shared and its speed drifts within seconds, so targets measured one after the',
    'other would see different machines. "server CPU ms / request" is the',
    "gateway process's own CPU time (from /proc) over a throughput round divided by the requests served, and",
    '"req/s per CPU core" its inverse: the capacity comparison least affected by what else the machine runs. The',
    'load generator is this process: it writes prebuilt requests on keep-alive sockets and only frames the responses',
    "(bench/support/raw-http.ts), about 0.018 ms of CPU per request against ~0.05 ms for undici's dispatch API or",
    'autocannon 9. In throughput rounds, with taskset (Linux), the gateway under test runs alone on the last core and',
    'the harness (load generator, upstream, dynalite) on the others, as a production gateway does not share its',
    'machine with its clients; both gateways are single Node processes, so each gets exactly one core. Latency',
    'slices run unpinned, each after 100 ms at the rate that is not recorded (`BENCH_PIN=0`: no pinning at all).',
    '"host steal" is the share of the VM\'s CPU time the hypervisor gave to others during a phase (/proc/stat).',
    '"Host wake-up latency" (bench/support/wake-latency.ts, as cyclictest measures it) is how much later than asked a',
    'thread sleeping 0.5 ms in a futex wait runs again, on each core with the servers idle: every request wakes sleeping',
    "processes at each hop (gateway, upstream, gateway, client), so a host that wakes late shows in a gateway's tail.",
    'Portkey 1.15.2 answers every streamed request through a custom host with HTTP 500 here (Node 20; its log shows',
    '`tryTargetsRecursively error: immutable TypeError: immutable` from `updateHeaders` appending to a fetch',
    "response's headers), so it has no streaming figures.",
  ].join('\n')
  const start = current.indexOf(heading)
  let next = start < 0 ? -1 : current.indexOf('\n## ', start + heading.length)
  if (next < 0) next = current.length
  // What follows the marker (runs gathered by hand, their reading) is kept; the run above it is replaced.
  const marker = current.indexOf(GENERATED_END, start)
  const kept = start >= 0 && marker >= 0 && marker < next ? current.slice(marker + GENERATED_END.length, next) : '\n'
  const section = `${heading}\n\n${about}\n\n${table}\n\n${GENERATED_END}${kept}`
  const updated =
    start < 0
      ? `${current.trimEnd()}\n\n${section}`
      : `${current.slice(0, start)}${section.trimEnd()}\n${current.slice(next).replace(/^\n*/, '\n')}`
  await writeFile(file, `${updated.trimEnd()}\n`)
}

try {
  await main()
} finally {
  for (const client of clients.values()) client.close()
  stopServers()
}
