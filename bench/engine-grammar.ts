/**
 * Reference engine costs that grow with a request's size: compiling a structured-output constraint (it runs on the
 * request path, blocking the event loop) and beam search per output length. Prints the median of a few runs; about
 * 10 s in all. Run with `npm run bench:engine:grammar`.
 */
import { beamSearch } from '#shared/engine/beam-search'
import { engineFor } from '#shared/engine/engine'
import { Matcher } from '#shared/engine/grammar/matcher'
import { regexToNode } from '#shared/engine/grammar/regex'
import { referenceCatalogModel } from '#shared/engine/settings'

const RUNS = 3

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
}

async function time(run: () => unknown | Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return median(times)
}

for (const regex of ['[^x]{1000}', '[^x]{10000}', '[\\s\\S]{10000}', '.{10000}', '(a?){10000}b', '\\d{10000}']) {
  const ms = await time(() => new Matcher({ rules: new Map([['root', regexToNode(regex)]]), root: 'root' }))
  console.log(`compile ${regex.padEnd(16)} ${ms.toFixed(1).padStart(8)} ms`)
}

const engine = engineFor(referenceCatalogModel())
for (const maxTokens of [500, 1000, 2000]) {
  const prepared = engine.prepare({
    messages: [{ role: 'user', content: 'Tell me about the capital of France.' }],
    use_beam_search: true,
    n: 2,
    max_tokens: maxTokens,
    ignore_eos: true,
  })
  const ms = await time(() => beamSearch(prepared.job, 2, async () => true))
  console.log(`beam search n=2, ${String(maxTokens).padStart(4)} tokens ${ms.toFixed(0).padStart(8)} ms`)
}
