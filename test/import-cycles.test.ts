import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '..')
const DIRS = ['shared', 'functions', 'infra', 'scripts']
const IMPORT = /^(?:import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm

function sources(dir: string, into: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) sources(path, into)
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) into.push(path)
  }
  return into
}

// The modules a file imports at run time (`import type` left out), resolved to files of the tree.
function importsOf(file: string): string[] {
  const out: string[] = []
  for (const [, typeOnly, spec = ''] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    if (typeOnly !== undefined) continue
    if (spec.startsWith('#shared/')) out.push(join(ROOT, 'shared', `${spec.slice('#shared/'.length)}.ts`))
    else if (spec.startsWith('#functions/')) out.push(join(ROOT, 'functions', `${spec.slice('#functions/'.length)}.ts`))
    else if (spec.startsWith('.')) out.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
  }
  return out
}

/** Every import cycle among the files, each as the list of files around it. */
function cycles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]))
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const found: string[][] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (state.get(next) === 'open') found.push(stack.slice(stack.indexOf(next)).map((f) => relative(ROOT, f)))
      else if (state.get(next) === undefined) visit(next)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of files) if (state.get(file) === undefined) visit(file)
  return found
}

describe('module imports', () => {
  it('form no cycle in shared/, functions/, infra/ and scripts/ (a cycle makes load order decide what is undefined)', () => {
    // Prepare
    const files = DIRS.flatMap((d) => sources(join(ROOT, d)))

    // Act
    const found = cycles(files)

    // Assess
    expect(files.length).toBeGreaterThan(300)
    expect(found).toEqual([])
  })
})
