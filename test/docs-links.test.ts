import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// The repository stands alone: comments, test names and docs cite the behaviour in docs/, never documents kept
// outside the repository, and every `docs/<file>.md §N.N` citation names a numbered heading of that doc.

const ROOT = join(import.meta.dirname, '..')
const SOURCE_DIRS = ['functions', 'shared', 'infra', 'scripts', 'bench', 'console', 'test', 'types']
const SOURCE_EXT = /\.(ts|tsx|js|mjs|cjs|html)$/
// Spelled in pieces so this file does not match itself.
const OUTSIDE = ['shared/' + 'contracts', 'contract ' + '§']
// STYLE.md (the house style guide) is cited by section and lives beside the repository, not in it.
const STYLE_CITATION = /STYLE(\.md)? §\d+/g
const DOC_CITATION = /(?:docs\/)?([\w-]+)\.md\b/g
const SECTION = /§(\d+(?:\.\d+)*)(?:[–-]§?(\d+(?:\.\d+)*))?/g

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'cdk.out') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path, out)
    else if (SOURCE_EXT.test(name)) out.push(path)
  }
  return out
}

function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((dir) => {
    try {
      return walk(join(ROOT, dir))
    } catch {
      return []
    }
  })
}

function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name))
  return [...docs, join(ROOT, 'README.md')]
}

const headingCache = new Map<string, Set<string> | undefined>()

/** The section numbers (`6`, `6.2`) of a doc's numbered headings, or undefined when there is no such doc. */
function sectionsOf(doc: string): Set<string> | undefined {
  if (!headingCache.has(doc)) {
    let sections: Set<string> | undefined
    try {
      const text = readFileSync(join(ROOT, 'docs', `${doc}.md`), 'utf8')
      sections = new Set([...text.matchAll(/^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/gm)].map((m) => m[1] as string))
    } catch {
      sections = undefined
    }
    headingCache.set(doc, sections)
  }
  return headingCache.get(doc)
}

/** Problems with the `§` citations of one line; `ownDoc` is the doc a bare `§` refers to (inside docs/). */
function lineProblems(line: string, ownDoc: string | undefined): string[] {
  const problems: string[] = []
  const text = line.replace(STYLE_CITATION, '')
  if (!text.includes('§')) return problems
  // Each § belongs to the nearest doc named before it on the line, else to the doc the line is in.
  const marks = [...text.matchAll(DOC_CITATION)].map((m) => ({ at: m.index, doc: m[1] as string }))
  for (const m of text.matchAll(SECTION)) {
    const owner = marks.filter((mark) => mark.at < m.index).at(-1)?.doc ?? ownDoc
    if (owner === undefined) {
      problems.push(`§${m[1]} names no doc (cite it as docs/<file>.md §N.N)`)
      continue
    }
    const sections = sectionsOf(owner)
    if (sections === undefined) {
      problems.push(`§${m[1]} cites docs/${owner}.md, which does not exist`)
      continue
    }
    for (const n of [m[1], m[2]]) {
      if (n !== undefined && !sections.has(n)) problems.push(`docs/${owner}.md has no section ${n}`)
    }
  }
  return problems
}

function scan(files: string[], ownDocOf: (file: string) => string | undefined): string[] {
  const problems: string[] = []
  for (const file of files) {
    if (file === import.meta.filename) continue
    const lines = readFileSync(file, 'utf8').split('\n')
    lines.forEach((line, i) => {
      const where = `${relative(ROOT, file)}:${i + 1}`
      for (const outside of OUTSIDE) if (line.includes(outside)) problems.push(`${where}: cites "${outside}"`)
      for (const problem of lineProblems(line, ownDocOf(file))) problems.push(`${where}: ${problem}`)
    })
  }
  return problems
}

describe('citations stay inside the repository', () => {
  it('source comments and test names cite numbered sections that exist in docs/', () => {
    expect(scan(sourceFiles(), () => undefined)).toEqual([])
  })

  it('docs cite their own and each other numbered sections, never an outside contract', () => {
    const ownDoc = (file: string) =>
      file.includes(`${join('docs', '')}`) ? relative(join(ROOT, 'docs'), file).replace(/\.md$/, '') : undefined
    expect(scan(docFiles(), ownDoc)).toEqual([])
  })
})
