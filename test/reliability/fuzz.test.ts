import { randomUUID } from 'node:crypto'
import { ScanCommand } from '@aws-sdk/lib-dynamodb'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FUNCTIONS, type FunctionEntry, type FunctionId, type RouteEntry } from '#functions/manifest'
import { db, table } from '#shared/db/client'
import { loadFunction } from '../../scripts/local/app.js'
import { ANY_VALUE, DEEP, HUGE_NUMBERS, ODD_STRINGS } from '../support/arbitraries.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { endPart, startPart } from '../support/calls.js'

// Runs per route: enough to cover every generator branch several times, small enough for two shared cores.
// `LOOM_FUZZ_SCALE` multiplies it for a longer campaign (the suite's assertions are the same).
const RUNS = Math.round(40 * Number(process.env.LOOM_FUZZ_SCALE ?? 1))

/** A request the fuzzer sends: the body text (undefined for none), its content type and extra query parameters. */
type Case = {
  body: string | undefined
  contentType: string | undefined
  query: Record<string, string>
  /** The inference project header (`OpenAI-Project`), or undefined to send none. */
  projectHeader: string | undefined
}

// Field names the endpoints give meaning to, so mistyped values reach the validators and the handlers.
const FIELDS = [
  'project_id',
  'entity',
  'project',
  'name',
  'base_model',
  'model',
  'messages',
  'start',
  'end',
  'id',
  'ids',
  'call_ids',
  'object_id',
  'digest',
  'digests',
  'obj',
  'table',
  'rows',
  'row_digests',
  'base_digest',
  'updates',
  'include_storage_size',
  'filter',
  'query',
  'limit',
  'offset',
  'sort_by',
  'weave_ref',
  'refs',
  'feedback_type',
  'payload',
  'annotation_state',
  'scorer_refs',
  'tags',
  'aliases',
  'trajectory_groups',
  'content',
  'batch',
  'req',
  'items',
]

/** A body near a valid one: the caller's own project in the family's form, plus random, often mistyped fields. */
function nearValid(entry: FunctionEntry, entity: string, project: string): fc.Arbitrary<Record<string, unknown>> {
  const extras = fc.dictionary(fc.constantFrom(...FIELDS), ANY_VALUE, { maxKeys: 6 })
  const own = entry.family === 'training' ? { entity, project: project.split('/')[1] } : { project_id: project }
  return extras.map((fields) => ({ ...fields, ...own }))
}

function cases(entry: FunctionEntry, route: RouteEntry, entity: string, project: string): fc.Arbitrary<Case> {
  const json = (value: unknown) => JSON.stringify(value) ?? 'null'
  const query = fc.dictionary(
    fc.constantFrom('project_id', 'project', 'entity', 'limit', 'start', 'end', 'after'),
    fc.oneof(fc.constant(project), fc.constant(entity), ODD_STRINGS, HUGE_NUMBERS.map(String)),
    { maxKeys: 4 },
  )
  // Mostly the caller's own project; otherwise malformed, over-long or another entity's (printable ASCII: a header).
  const projectHeader = fc.oneof(
    { weight: 4, arbitrary: fc.constant(project) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(undefined, '', 'a/b/c', '/', `${entity}/`, 'ent-other/p', 'x'.repeat(3000)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  )
  if (route.method === 'GET') {
    return fc.record({ body: fc.constant(undefined), contentType: fc.constant(undefined), query, projectHeader })
  }
  const text = fc.oneof(
    { weight: 3, arbitrary: ANY_VALUE.map(json) },
    { weight: 5, arbitrary: nearValid(entry, entity, project).map(json) },
    { weight: 1, arbitrary: DEEP },
    // Truncated JSON: a near-valid body cut anywhere.
    {
      weight: 2,
      arbitrary: fc
        .tuple(nearValid(entry, entity, project).map(json), fc.nat())
        .map(([s, n]) => s.slice(0, n % Math.max(1, s.length))),
    },
  )
  const contentType = fc.constantFrom<string | undefined>(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    undefined,
  )
  return fc.record({ body: text, contentType, query: fc.constant({}), projectHeader })
}

/** Whether a 4xx body has the family's error shape. */
function hasFamilyShape(family: FunctionEntry['family'], body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  if (family === 'inference') {
    const e = b.error as Record<string, unknown> | undefined
    return (
      typeof e?.message === 'string' &&
      typeof e.type === 'string' &&
      'param' in e &&
      'code' in e &&
      Object.keys(b).length === 1
    )
  }
  if (family === 'training') return 'detail' in b
  if (typeof b.reason === 'string') return true
  return (
    Array.isArray(b.detail) &&
    b.detail.every((d) => typeof d === 'object' && d !== null && 'loc' in d && 'msg' in d && 'type' in d)
  )
}

/** Every item of the table whose JSON mentions `needle`. */
async function itemsMentioning(needles: string[]): Promise<string[]> {
  const found: string[] = []
  let start: Record<string, unknown> | undefined
  do {
    const page = await db().send(new ScanCommand({ TableName: table(), ExclusiveStartKey: start }))
    for (const item of page.Items ?? []) {
      const text = JSON.stringify(item)
      if (needles.some((n) => text.includes(n))) found.push(text.slice(0, 200))
    }
    start = page.LastEvaluatedKey
  } while (start)
  return found
}

const counts: string[] = []
afterAll(() => {
  process.stdout.write(`\nfuzz cases per route (runs=${RUNS}):\n${counts.join('\n')}\n`)
})

let caller: TestCaller
beforeAll(async () => {
  caller = await newCaller()
})

const ROUTES = FUNCTIONS.filter((f) => f.auth).flatMap((entry) => entry.routes.map((route) => ({ entry, route })))

describe('every authenticated route under fuzzed input', () => {
  it.each(ROUTES.map((r) => [`${r.route.method} ${r.route.path}`, r] as const))(
    '%s never answers 5xx, answers 4xx in its family shape, and writes nothing when it rejects',
    async (_name, { entry, route }) => {
      // Prepare
      const { app } = await loadFunction(entry)
      const rejectedProjects: string[] = []
      const failures: string[] = []
      let ran = 0
      let rejected = 0
      const pathArb = fc.constantFrom('x', randomUUID(), 'a%2Fb', '%E2%9C%93', '0')
      // One fresh project per case, so each rejected case can be looked up in the table afterwards.
      const arb = fc.tuple(fc.constant(null), pathArb).chain(([, seg]) => {
        const project = `${caller.entity}/fz${randomUUID().replace(/-/g, '').slice(0, 12)}`
        return cases(entry, route, caller.entity, project).map((c) => ({ c, seg, project }))
      })

      // Act
      await fc.assert(
        fc.asyncProperty(arb, async ({ c, seg, project }) => {
          ran++
          const path = route.path.replace(/:[A-Za-z_]+/g, seg)
          const search = new URLSearchParams(c.query).toString()
          const headers: Record<string, string> = { ...caller.bearer }
          if (c.contentType !== undefined) headers['content-type'] = c.contentType
          if (entry.family === 'inference' && c.projectHeader !== undefined) headers['openai-project'] = c.projectHeader
          const res = await app.fetch(
            new Request(`http://loom.test${path}${search ? `?${search}` : ''}`, {
              method: route.method,
              headers,
              ...(c.body === undefined ? {} : { body: c.body }),
            }),
          )
          const text = await res.text()
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          if (res.status >= 500 || (res.status >= 400 && !hasFamilyShape(entry.family, json))) {
            failures.push(`${res.status} ${text.slice(0, 160)} ← ${(c.body ?? search).slice(0, 160)}`)
          }
          if (res.status >= 400) {
            rejected++
            rejectedProjects.push(project.slice(caller.entity.length + 1))
          }
        }),
        { numRuns: RUNS },
      )
      const written = entry.access === 'write' ? await itemsMentioning(rejectedProjects) : []
      counts.push(`  ${route.method} ${route.path}: ${ran} cases, ${rejected} rejected`)

      // Assess
      expect(failures).toEqual([])
      expect(written).toEqual([])
      expect(ran).toBe(RUNS)
    },
  )
})

/** A valid body per write function (its one declared route), built for a given project; the fuzzer mutates a node. */
const TEMPLATES: Partial<Record<FunctionId, (entity: string, project: string) => unknown>> = {
  'tracing/start-call': (_e, p) => ({ start: startPart(p) }),
  'tracing/end-call': (_e, p) => ({ end: endPart(p, randomUUID()) }),
  'tracing/upsert-call-batch': (_e, p) => {
    const id = randomUUID()
    return {
      batch: [
        { mode: 'start', req: { start: startPart(p, { id }) } },
        { mode: 'end', req: { end: endPart(p, id) } },
        { mode: 'start', req: { start: startPart(p) } },
      ],
    }
  },
  'tracing/create-obj': (_e, p) => ({ obj: { project_id: p, object_id: 'my-obj', val: { a: 1, b: [1, 2] } } }),
  'tracing/create-table': (_e, p) => ({ table: { project_id: p, rows: [{ a: 1 }, { a: 2 }] } }),
  // A fresh project holds no table: mutations meet the unknown base (404) or fail validation first.
  'tracing/update-table': (_e, p) => ({
    project_id: p,
    base_digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    updates: [{ append: { row: { a: 1 } } }, { pop: { index: 0 } }, { insert: { index: 0, row: { b: [1, 2] } } }],
  }),
  // No rows: the empty table, which needs no stored row.
  'tracing/create-table-from-digests': (_e, p) => ({ project_id: p, row_digests: [], expected_digest: null }),
  'tracing/create-cost': (_e, p) => ({
    project_id: p,
    costs: { 'gpt-4o': { prompt_token_cost: 0.001, completion_token_cost: 0.002 } },
  }),
  'tracing/create-feedback': (_e, p) => feedback(p),
  'tracing/create-feedback-batch': (_e, p) => ({ batch: [feedback(p), feedback(p), feedback(p)] }),
  'tracing/create-annotation-queue': (_e, p) => ({ project_id: p, name: 'queue', scorer_refs: [] }),
  'training/create-preview-model': (e, p) => ({
    entity: e,
    project: p.split('/')[1],
    name: `m-${randomUUID().slice(0, 8)}`,
    base_model: 'Qwen/Qwen2.5-7B-Instruct',
  }),
}

function feedback(project: string): Record<string, unknown> {
  return {
    project_id: project,
    weave_ref: `weave:///${project}/call/${randomUUID()}`,
    feedback_type: 'note',
    payload: { note: 'looks right' },
  }
}

/** Every path to a node of a JSON value (objects and arrays), the root excluded. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return []
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value)
  return keys.flatMap((k) => {
    const path = [...prefix, k]
    return [path, ...pathsOf((value as Record<string | number, unknown>)[k], path)]
  })
}

/** A copy of `value` with the node at `path` deleted (`remove`) or replaced by `replacement`. */
function mutate(value: unknown, path: (string | number)[], remove: boolean, replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>
  let node = copy
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  if (remove && Array.isArray(node)) node.splice(last as number, 1)
  else if (remove) delete node[last]
  else node[last] = replacement
  return copy
}

describe('write routes under mutated valid bodies', () => {
  const entries = ROUTES.filter((r) => TEMPLATES[r.entry.id] !== undefined)
  it.each(entries.map((r) => [`${r.route.method} ${r.route.path}`, r] as const))(
    '%s rejects a broken node with a 4xx in its family shape and writes nothing for it',
    async (name, { entry, route }) => {
      // Prepare
      const { app } = await loadFunction(entry)
      const template = TEMPLATES[entry.id] as (entity: string, project: string) => unknown
      const probe = template(caller.entity, `${caller.entity}/probe`)
      const arb = fc.record({
        path: fc.constantFrom(...pathsOf(probe)),
        remove: fc.boolean(),
        replacement: ANY_VALUE,
      })
      const failures: string[] = []
      const rejectedProjects: string[] = []
      let ran = 0
      let accepted = 0

      // Act
      await fc.assert(
        fc.asyncProperty(arb, async ({ path, remove, replacement }) => {
          ran++
          const projectName = `mu${randomUUID().replace(/-/g, '').slice(0, 12)}`
          const project = `${caller.entity}/${projectName}`
          const body = mutate(template(caller.entity, project), path, remove, replacement)
          const headers = { ...caller.bearer, 'content-type': 'application/json' }
          const res = await app.fetch(
            new Request(`http://loom.test${route.path}`, {
              method: route.method,
              headers,
              body: JSON.stringify(body),
            }),
          )
          const text = await res.text()
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          if (res.status >= 500 || (res.status >= 400 && !hasFamilyShape(entry.family, json))) {
            failures.push(
              `${res.status} ${text.slice(0, 160)} ← ${path.join('.')} ${remove ? 'removed' : `= ${JSON.stringify(replacement)?.slice(0, 80)}`}`,
            )
          }
          if (res.status >= 400) rejectedProjects.push(projectName)
          else accepted++
        }),
        { numRuns: RUNS },
      )
      const written = await itemsMentioning(rejectedProjects)
      counts.push(
        `  ${name} (mutated valid body): ${ran} cases, ${accepted} accepted, ${rejectedProjects.length} rejected`,
      )

      // Assess
      expect(failures).toEqual([])
      expect(written).toEqual([])
      expect(ran).toBe(RUNS)
    },
  )
})
