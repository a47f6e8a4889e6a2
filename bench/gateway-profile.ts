import { mkdtemp, readdir, readFile } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { bundleAsDeployed } from './support/bundle.js'
import { processCpuMs, startServer, stopServers } from './support/processes.js'
import { loomChatRequest, RawHttpClient } from './support/raw-http.js'

// Where Loom's CPU goes per chat completion: the bench's Loom server (bench/support/loom-server.ts, bundled with the
// deployed settings but not minified, so the profile keeps names and each bundled module's `// path` comment) under
// `node --cpu-prof`, the fast upstream and a dynalite beside it, 64 requests in flight for a few seconds. Prints the
// self time by source file and by function and the inclusive time of the request path's stages, start-up and warm-up
// left out.
//   npx tsx bench/gateway-profile.ts [stream|buffered] [seconds] [cpu]
const MODE = process.argv[2] === 'buffered' ? 'buffered' : 'stream'
const SECONDS = Number(process.argv[3] ?? 8)
// `cpu`: no profiler, only each process's CPU time per request (/proc, Linux).
const PROFILE = process.argv[4] !== 'cpu'
const CONCURRENCY = 64
const WARM_UP_S = 2
const root = process.cwd()
// BENCH_TRACING=1: completions traced, as `npm start` does (bench/gateway.ts takes the same switch).
const TRACING = { env: { LOOM_INFERENCE_TRACING: process.env.BENCH_TRACING === '1' ? 'on' : 'off' } }

type ProfileNode = {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number }

// Source file of each line of the unminified bundle, from esbuild's `// path/to/file.ts` module comments.
function moduleOfLine(bundle: string): (line: number) => string {
  const starts: { line: number; file: string }[] = []
  bundle.split('\n').forEach((text, line) => {
    // Paths outside the working directory (a worktree whose node_modules is a link) start with `../`.
    const match = /^\/\/ (?:\.\.\/)*(?:\S*?\/)??((?:node_modules\/|shared\/|functions\/|bench\/)\S+)$/.exec(text)
    if (match?.[1] !== undefined) starts.push({ line, file: match[1] })
  })
  return (line) => {
    let file = '(bundle)'
    for (const s of starts) {
      if (s.line > line) break
      file = s.file
    }
    return file.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+)\/.*/, '$1')
  }
}

// `skipMs`: the start and the warm-up, left out (module loading, first compilations).
// Stages of the request path: a sample belongs to the first frame from its leaf up that one of these claims (a
// library's own frames below Loom's count as the library's).
const STAGES: [string, (fn: string, file: string) => boolean][] = [
  ['socket writes (writev syscall)', (fn) => fn === 'writev' || fn === 'writeUtf8String'],
  [
    'upstream SSE parsing and chunk rewriting',
    (fn, file) =>
      /chunk-json|chunk-template|openai-compatible/.test(file) &&
      /addChunk|usualChunk|delta|ending|withUsage|isPlain|rewriteChunkJson|learn|toChunk|parseEvent|stream(Batches|Chunks)|fillChoiceNulls|skip|closingQuote|usageTail|keyIs|namesOf/.test(
        fn,
      ),
  ],
  ['SSE framing, usage tally, batching', (_fn, file) => /sse-stream|sse-framing|stream-tally/.test(file)],
  ['web streams (ReadableStream and its reader)', (_fn, file) => /webstreams|js_transferable/.test(file)],
  [
    'response writing (direct writer, Hono adapter piping)',
    (fn, file) =>
      /node-stream/.test(file) ||
      (/@hono\/node-server/.test(file) && /flow|flushHeaders|writeFromReadable|responseVia/.test(fn)),
  ],
  [
    'upstream HTTP client (undici, request body)',
    (fn, file) =>
      /undici|upstream-http|upstream-body/.test(file) || (/openai-compatible/.test(file) && /open/.test(fn)),
  ],
  [
    'request body, JSON parse and validation',
    (_fn, file) =>
      /read-json|request-body|validate-request|raw-request-rules|present-fields|serving-rules|zod|message-rules/.test(
        file,
      ),
  ],
  [
    'auth, project, limits, catalog',
    (_fn, file) => /auth|rate-limit|catalog|refreshing-cache|completion-limits|limiter/.test(file),
  ],
  ['metering, completion bookkeeping', (_fn, file) => /usage-meter|chat-completions|metrics/.test(file)],
  ['Hono routing and middleware', (_fn, file) => /^hono$|create-app|@hono\/node-server|node-bindings/.test(file)],
  ["Node's HTTP server, sockets, streams", (_fn, file) => /^node:/.test(file)],
  ['garbage collection', (fn) => fn === '(garbage collector)'],
]

function summarise(profile: Profile, fileOf: (line: number) => string, skipMs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const where = (n: ProfileNode) => {
    const { url, functionName, lineNumber } = n.callFrame
    if (url === '') return { file: functionName, fn: functionName }
    const file = url.endsWith('.mjs') ? fileOf(lineNumber) : url.replace(/^node:/, 'node:')
    return { file, fn: `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}` }
  }
  const self = new Map<string, number>()
  const selfFile = new Map<string, number>()
  const stages = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  let elapsed = 0
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    elapsed += dt
    const node = byId.get(id)
    if (node === undefined || elapsed < skipMs * 1000) return
    if (node.callFrame.functionName === '(idle)') return
    total += dt
    const w = where(node)
    self.set(w.fn, (self.get(w.fn) ?? 0) + dt)
    selfFile.set(w.file, (selfFile.get(w.file) ?? 0) + dt)
    let stage = 'other (microtasks, program, runtime)'
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)
      if (n === undefined) break
      const { file } = where(n)
      const claimed = STAGES.find(([, claims]) => claims(n.callFrame.functionName, file))
      if (claimed !== undefined) {
        stage = claimed[0]
        break
      }
    }
    stages.set(stage, (stages.get(stage) ?? 0) + dt)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)
      if (n === undefined) break
      const { fn } = where(n)
      if (seen.has(fn)) continue
      seen.add(fn)
      inclusive.set(fn, (inclusive.get(fn) ?? 0) + dt)
    }
  })
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((v * 100) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n')
  return {
    total,
    stages: top(stages, STAGES.length + 1),
    self: top(self, 40),
    selfFile: top(selfFile, 30),
    inclusive: top(inclusive, 70),
  }
}

async function main() {
  const upStart = await startServer(['--import', 'tsx', 'bench/support/fast-upstream.ts'], TRACING)
  const up = JSON.parse(upStart.line) as { port: number }
  const storeStart = await startServer(['--import', 'tsx', 'bench/support/dynalite-server.ts'], TRACING)
  const store = JSON.parse(storeStart.line) as { port: number }
  const bundle = await bundleAsDeployed(
    'bench/support/loom-server.ts',
    join(root, 'node_modules/.cache/loom-bench/loom-profile.mjs'),
    { external: ['dynalite'], sourcemap: false, minify: false },
  )
  const dir = await mkdtemp(join(os.tmpdir(), 'loom-prof-'))
  const spawned = performance.now()
  const loomStart = await startServer(
    [
      '--max-semi-space-size=64',
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100'] : []),
      bundle,
      `http://127.0.0.1:${up.port}/v1`,
      `http://127.0.0.1:${store.port}`,
    ],
    TRACING,
  )
  const loom = JSON.parse(loomStart.line) as { port: number; key: string }
  const bytes = loomChatRequest(loom.port, loom.key, MODE === 'stream')
  const client = new RawHttpClient(loom.port)
  let done = 0
  const load = async (seconds: number) => {
    const end = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          const t = await client.request(bytes)
          if (t.status !== 200) throw new Error(`HTTP ${t.status}`)
          done++
        }
      }),
    )
  }
  await load(WARM_UP_S)
  const skipMs = performance.now() - spawned
  done = 0
  const pids = { loom: loomStart.pid, dynalite: storeStart.pid, upstream: upStart.pid }
  const before = await Promise.all(Object.values(pids).map(processCpuMs))
  await load(SECONDS)
  const after = await Promise.all(Object.values(pids).map(processCpuMs))
  client.close()
  const perRequest = Object.keys(pids)
    .map((name, i) => {
      const [user, system] = (['user', 'system'] as const).map(
        (k) => ((after[i]?.[k] ?? 0) - (before[i]?.[k] ?? 0)) / done,
      )
      return `${name} ${((user ?? 0) + (system ?? 0)).toFixed(3)} (user ${user?.toFixed(3)}, system ${system?.toFixed(3)})`
    })
    .join(', ')
  process.stdout.write(`${MODE}: ${done} requests in ${SECONDS} s; CPU ms per request: ${perRequest}\n`)
  if (!PROFILE) return
  const exited = new Promise((resolve) => loomStart.child.once('exit', resolve))
  loomStart.child.kill('SIGTERM')
  await exited
  const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`no profile in ${dir}`)
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as Profile
  const { total, stages, self, selfFile, inclusive } = summarise(
    profile,
    moduleOfLine(await readFile(bundle, 'utf8')),
    skipMs,
  )
  process.stdout.write(
    `${MODE}: ${done} requests in ${SECONDS} s after ${WARM_UP_S} s of warm-up; non-idle samples ${(total / 1000).toFixed(0)} ms, ` +
      `${(total / 1000 / done).toFixed(3)} ms per request; profile ${join(dir, file)}\n\n` +
      `## by stage\n${stages}\n\n## self time by file\n${selfFile}\n\n## self time by function\n${self}\n\n## inclusive time\n${inclusive}\n`,
  )
}

try {
  await main()
} finally {
  stopServers()
}
