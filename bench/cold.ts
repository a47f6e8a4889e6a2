import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'
import { FUNCTIONS } from '#functions/manifest'
import { LAMBDA_BUNDLE } from '../infra/bundling.js'

// `npm run bench:cold`: bundles every function with the deployed esbuild settings (infra/bundling.ts: minified ESM
// for node22, AWS SDK bundled with the environment-only credential provider, linked source map) and measures each
// bundle's size and cold import time in a fresh Node process started with the deployed `--enable-source-maps`
// (median of RUNS). Not a test: figures go to docs/benchmarks.md.
const RUNS = Number(process.argv[2] ?? 5)
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

const rows: { id: string; kb: number; importMs: number; cpuMs: number; stream: boolean }[] = []
for (const entry of ENTRIES) {
  const outfile = join(OUT, `${entry.id.replace('/', '__')}.mjs`)
  await build({
    entryPoints: [join('functions', entry.id, 'handler.ts')],
    bundle: true,
    platform: 'node',
    format: LAMBDA_BUNDLE.format,
    target: LAMBDA_BUNDLE.target,
    minify: LAMBDA_BUNDLE.minify,
    sourcemap: LAMBDA_BUNDLE.sourcemap,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: { js: LAMBDA_BUNDLE.banner },
    alias: LAMBDA_BUNDLE.alias,
    absWorkingDir: process.cwd(),
    outfile,
    logLevel: 'silent',
  })
  const times: number[] = []
  const cpu: number[] = []
  for (let i = 0; i < RUNS; i++) {
    // CPU time (user + system) beside wall time: on a shared, loaded machine it moves far less than wall time.
    const script = [
      'const c = process.cpuUsage(); const t = performance.now()',
      `await import(${JSON.stringify(outfile)})`,
      'const u = process.cpuUsage(c)',
      'console.log(JSON.stringify([performance.now() - t, (u.user + u.system) / 1000]))',
    ].join('\n')
    const out = execFileSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
      env: {
        ...process.env,
        AWS_LAMBDA_FUNCTION_NAME: 'bench',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        LOOM_TABLE_NAME: 'bench',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const [wallMs, cpuMs] = JSON.parse(String(out).trim().split('\n').at(-1) ?? '[]') as [number, number]
    times.push(wallMs)
    cpu.push(cpuMs)
  }
  rows.push({
    id: entry.id,
    kb: statSync(outfile).size / 1024,
    importMs: median(times),
    cpuMs: median(cpu),
    stream: entry.stream,
  })
}

const lines = [
  '| function | bundle (KB, minified) | cold import (ms, median) | import CPU (ms, median) |',
  '|---|---:|---:|---:|',
]
for (const row of rows) {
  const cells = [row.kb.toFixed(1), row.importMs.toFixed(1), row.cpuMs.toFixed(1)]
  lines.push(`| ${row.id}${row.stream ? ' (streaming)' : ''} | ${cells.join(' | ')} |`)
}
const table = lines.join('\n')
writeFileSync(join(OUT, 'results.md'), `${table}\n`)
process.stdout.write(`${table}\n\nNode ${process.version}, ${RUNS} runs per function.\n`)
