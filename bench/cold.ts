import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'
import { FUNCTIONS } from '#functions/manifest'

// `npm run bench:cold`: bundles every function the way infra/constructs/http-function.ts does (minified ESM for
// node22, AWS SDK external as on the Lambda runtime) and measures each bundle's size and cold import time in a fresh
// Node process (median of RUNS). Not a test: figures go to docs/benchmarks.md.
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

const rows: { id: string; kb: number; importMs: number; stream: boolean }[] = []
for (const entry of ENTRIES) {
  const outfile = join(OUT, `${entry.id.replace('/', '__')}.mjs`)
  await build({
    entryPoints: [join('functions', entry.id, 'handler.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*', '@smithy/*'],
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    outfile,
    logLevel: 'silent',
  })
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const script = `const t = performance.now(); await import(${JSON.stringify(outfile)}); console.log(performance.now() - t)`
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        ...process.env,
        AWS_LAMBDA_FUNCTION_NAME: 'bench',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        LOOM_TABLE_NAME: 'bench',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    times.push(Number(String(out).trim().split('\n').at(-1)))
  }
  rows.push({ id: entry.id, kb: statSync(outfile).size / 1024, importMs: median(times), stream: entry.stream })
}

const lines = ['| function | bundle (KB, minified) | cold import (ms, median) |', '|---|---:|---:|']
for (const row of rows) {
  lines.push(`| ${row.id}${row.stream ? ' (streaming)' : ''} | ${row.kb.toFixed(1)} | ${row.importMs.toFixed(1)} |`)
}
const table = lines.join('\n')
writeFileSync(join(OUT, 'results.md'), `${table}\n`)
process.stdout.write(`${table}\n\nNode ${process.version}, ${RUNS} runs per function.\n`)
