import { afterEach, describe, expect, it } from 'vitest'
import {
  type ListedProject,
  mayOpenProject,
  PAGES,
  type PageId,
  parseRoute,
  projectPage,
  returnHash,
  routeHash,
  setLinkProject,
  signInHash,
} from '../../console/src/lib/route.js'

// What a parsed route says, without the URLSearchParams object.
const plain = (hash: string) => {
  const { page, parts, params, project } = parseRoute(hash)
  return { page, parts, params: Object.fromEntries(params), project }
}

afterEach(() => setLinkProject(undefined))

describe('routeHash and parseRoute', () => {
  it.each([
    ['acme/support-bot'],
    ['acme/100% done'],
    ['acme/my bot'],
    ['acmé/日本語 ü'],
    ['ent-1/a&b+c=d'],
    ['trace/traces'],
  ])('round-trips a trace link with its project %j', (project) => {
    // Act
    const hash = routeHash('trace', ['0195-trace id/x'], { call: 'c 1&2' }, project)

    // Assess
    expect(plain(hash)).toEqual({ page: 'trace', parts: ['0195-trace id/x'], params: { call: 'c 1&2' }, project })
  })

  it('puts the project first, each part encoded', () => {
    expect(routeHash('trace', ['t1'], { call: 'c1' }, 'acme/100% done ü')).toBe(
      '#/acme/100%25%20done%20%C3%BC/trace/t1?call=c1',
    )
    expect(routeHash('traces', [], undefined, 'acme/bot')).toBe('#/acme/bot/traces')
  })

  it("round-trips every project page's link, and leaves the project out of Sign in and API", () => {
    for (const { id } of PAGES) {
      // Act
      const hash = routeHash(id, [], undefined, 'acme/bot')

      // Assess
      expect(plain(hash)).toEqual({
        page: id,
        parts: [],
        params: {},
        project: projectPage(id) ? 'acme/bot' : undefined,
      })
    }
    expect(routeHash('signin', [], undefined, 'acme/bot')).toBe('#/signin')
    expect(routeHash('api', [], undefined, 'acme/bot')).toBe('#/api')
  })

  it('names the open project in links built without one', () => {
    // Prepare
    setLinkProject('acme/my bot')

    // Act and assess: as the pages build their links
    expect(routeHash('trace', ['t1'], { call: 'c1' })).toBe('#/acme/my%20bot/trace/t1?call=c1')
    expect(routeHash('queues', ['q1'])).toBe('#/acme/my%20bot/queues/q1')
    expect(routeHash('signin')).toBe('#/signin')
    expect(routeHash('traces', [], undefined, 'other/one')).toBe('#/other/one/traces')

    // Act and assess: none open
    setLinkProject(undefined)
    expect(routeHash('trace', ['t1'])).toBe('#/trace/t1')
  })

  it('leaves out a project that is not <entity>/<project>', () => {
    expect(routeHash('traces', [], undefined, 'no-slash')).toBe('#/traces')
    expect(routeHash('traces', [], undefined, '/bot')).toBe('#/traces')
    expect(routeHash('traces', [], undefined, 'acme/')).toBe('#/traces')
  })
})

describe('parseRoute', () => {
  it.each<[string, PageId, string[], Record<string, string>]>([
    ['#/trace/t1?call=c1', 'trace', ['t1'], { call: 'c1' }],
    ['#/trace/t%201', 'trace', ['t 1'], {}],
    ['#/traces', 'traces', [], {}],
    ['#/queues/q1', 'queues', ['q1'], {}],
    ['#/objects/my%2Fobj', 'objects', ['my/obj'], {}],
    ['#/signin', 'signin', [], {}],
    ['#/api', 'api', [], {}],
  ])('reads the older form %s without a project', (hash, page, parts, params) => {
    expect(plain(hash)).toEqual({ page, parts, params, project: undefined })
  })

  it('reads an entity or project named like a page as the project form', () => {
    expect(plain('#/trace/traces/trace/t1')).toEqual({
      page: 'trace',
      parts: ['t1'],
      params: {},
      project: 'trace/traces',
    })
  })

  it('reads an empty, unknown or malformed hash as the Traces page', () => {
    expect(plain('')).toEqual({ page: 'traces', parts: [], params: {}, project: undefined })
    expect(plain('#/nowhere')).toMatchObject({ page: 'traces', project: undefined })
    expect(plain('#/acme/bot/nowhere')).toMatchObject({ page: 'traces', project: undefined })
    // A stray `%` is kept as typed rather than failing the whole route.
    expect(plain('#/acme/100%/trace/t1')).toEqual({ page: 'trace', parts: ['t1'], params: {}, project: 'acme/100%' })
  })

  it('keeps a `?` inside the query', () => {
    expect(plain('#/acme/bot/trace/t1?call=a?b').params).toEqual({ call: 'a?b' })
  })
})

describe('mayOpenProject', () => {
  const listed: ListedProject[] = [
    { project_id: 'acme/bot', entity: 'acme', project: 'bot' },
    { project_id: 'team/evals', entity: 'team', project: 'evals' },
  ]

  it("opens a listed project and any other project of a listed entity (the key's own)", () => {
    expect(mayOpenProject(listed, 'acme/bot')).toBe(true)
    expect(mayOpenProject(listed, 'team/new one')).toBe(true)
  })

  it('refuses a project of an entity the answer does not name, or no project at all', () => {
    expect(mayOpenProject(listed, 'someone/bot')).toBe(false)
    expect(mayOpenProject(listed, 'acme')).toBe(false)
    expect(mayOpenProject([], 'acme/bot')).toBe(false)
  })
})

describe('signInHash and returnHash', () => {
  it('returns to the page a Sign in link came from, its query and project included', () => {
    // Prepare
    const from = '#/acme/my%20bot/traces?status=error&sort=op&offset=50'

    // Act
    const link = signInHash(from)

    // Assess
    expect(plain(link)).toEqual({ page: 'signin', parts: [], params: { next: from }, project: undefined })
    expect(returnHash(link, 'acme/my bot')).toBe(from)
    // An older link without the project opens in whichever project is picked.
    expect(returnHash(signInHash('#/usage'), 'acme/bot')).toBe('#/usage')
  })

  it('links to the plain Sign in page from no route or from Sign in itself', () => {
    expect(signInHash('')).toBe('#/signin')
    expect(signInHash('#/signin?next=%23%2Ftraces')).toBe('#/signin')
  })

  it('goes nowhere back for another project, the Sign in page, no route or anything but a hash', () => {
    expect(returnHash(signInHash('#/acme/bot/traces'), 'team/evals')).toBeUndefined()
    expect(returnHash('#/signin?next=%23%2Fsignin', 'acme/bot')).toBeUndefined()
    expect(returnHash('#/signin', 'acme/bot')).toBeUndefined()
    expect(returnHash(`#/signin?${new URLSearchParams({ next: 'https://elsewhere.example/#/traces' })}`, 'a/b')).toBe(
      undefined,
    )
    expect(returnHash(`#/signin?${new URLSearchParams({ next: '//elsewhere.example' })}`, 'a/b')).toBeUndefined()
  })
})
