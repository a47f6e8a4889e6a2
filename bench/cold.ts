import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { BuildOptions } from 'esbuild'
import { FUNCTIONS } from '#functions/manifest'
import { bundleAsDeployed } from './support/bundle.js'

// `npm run bench:cold [runs] [compare]`: bundles every function with the deployed esbuild settings
// (infra/bundling.ts: minified ESM for node22, AWS SDK bundled with the environment-only credential provider, linked
// source map) and measures each bundle's size and cold import time in a fresh Node process started as deployed
// (without `--enable-source-maps`, HttpFunction's default; median of RUNS). `compare` also builds each function the
// previous way (AWS SDK external, loaded from node_modules as from the Lambda runtime) and interleaves its runs with
// the deployed bundle's, so both see the same machine load. Not a test: figures go to docs/benchmarks.md.
const RUNS = Number(process.argv[2] ?? 5)
const COMPARE = process.argv[3] === 'compare'
// Inside the repository, so the external variant resolves the SDK from node_modules.
const OUT = join(process.cwd(), 'bench-results', 'cold')
const ENTRIES = [
  ...FUNCTIONS.map((f) => ({ id: f.id, stream: f.stream ?? false })),
  { id: 'auth/authorize', stream: false },
]

rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

// The deployed settings, and the same with the AWS SDK left to the runtime (`compare`).
const EXTERNAL_SDK: BuildOptions = { alias: {}, external: ['@aws-sdk/*', '@smithy/*'] }

function bundle(id: string, variant: BuildOptions, suffix: string): Promise<string> {
  return bundleAsDeployed(
    join('functions', id, 'handler.ts'),
    join(OUT, `${id.replace('/', '__')}${suffix}.mjs`),
    variant,
  )
}

/** One cold import in a fresh process: wall time and CPU time (user + system), in ms. */
function importOnce(outfile: string): [number, number] {
  const script = [
    'const c = process.cpuUsage(); const t = performance.now()',
    `await import(${JSON.stringify(outfile)})`,
    'const u = process.cpuUsage(c)',
    'console.log(JSON.stringify([performance.now() - t, (u.user + u.system) / 1000]))',
  ].join('\n')
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      ...process.env,
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      LOOM_TABLE_NAME: 'bench',
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  return JSON.parse(String(out).trim().split('\n').at(-1) ?? '[]') as [number, number]
}

type Sample = { kb: number; wall: number[]; cpu: number[] }
const sample = (outfile: string): Sample => ({ kb: statSync(outfile).size / 1024, wall: [], cpu: [] })

const lines = [
  `| function | bundle (KB, minified) | cold import (ms, median) | cold import (ms, min) | import CPU (ms, median) |${
    COMPARE ? ' SDK external: KB | SDK external: import (ms, median) |' : ''
  }`,
  `|---|---:|---:|---:|---:|${COMPARE ? '---:|---:|' : ''}`,
]
for (const entry of ENTRIES) {
  const deployed = await bundle(entry.id, {}, '')
  const external = COMPARE ? await bundle(entry.id, EXTERNAL_SDK, '.external') : undefined
  const samples = new Map<string, Sample>([[deployed, sample(deployed)]])
  if (external !== undefined) samples.set(external, sample(external))
  // CPU time and the fastest run beside the median: on a shared, loaded machine they move far less.
  for (let i = 0; i < RUNS; i++) {
    for (const [outfile, s] of samples) {
      const [wallMs, cpuMs] = importOnce(outfile)
      s.wall.push(wallMs)
      s.cpu.push(cpuMs)
    }
  }
  const d = samples.get(deployed) as Sample
  const cells = [d.kb, median(d.wall), Math.min(...d.wall), median(d.cpu)].map((n) => n.toFixed(1))
  const e = external === undefined ? undefined : samples.get(external)
  if (e !== undefined) cells.push(e.kb.toFixed(1), median(e.wall).toFixed(1))
  lines.push(`| ${entry.id}${entry.stream ? ' (streaming)' : ''} | ${cells.join(' | ')} |`)
}

const table = lines.join('\n')
writeFileSync(join(OUT, 'results.md'), `${table}\n`)
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ')
process.stdout.write(`${table}\n\nNode ${process.version}, ${RUNS} runs per function, load average ${load}.\n`)
