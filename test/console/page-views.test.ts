import { describe, expect, it } from 'vitest'
import {
  chosenAxis,
  chosenModels,
  chosenRowsOffset,
  chosenVersion,
  DEFAULT_USAGE_VIEW,
  defaultFeedbackView,
  type FeedbackView,
  feedbackViewParams,
  objectViewParams,
  parseFeedbackView,
  parseUsageView,
  trainingParams,
  type UsageView,
  usageViewParams,
} from '../../console/src/lib/page-views.js'
import { parseRoute, routeHash } from '../../console/src/lib/route.js'
import { changedParams, knownOf, listedOr, listParam, offsetParam, oneOf } from '../../console/src/lib/view-query.js'

// The browser's zone stands for any: the default time zone, left out of links.
const ZONE = 'Europe/Berlin'
const query = (hash: string) => parseRoute(hash).params

describe('view-query helpers', () => {
  it('reads a value the page offers, anything else as the fallback', () => {
    expect(oneOf('7d', ['24h', '7d'], '24h')).toBe('7d')
    expect(oneOf('300', [0, 300], 0)).toBe(300)
    expect(oneOf('0300', [0, 300], 0)).toBe(0)
    expect(oneOf(null, ['24h', '7d'], '24h')).toBe('24h')
    expect(oneOf('7D', ['24h', '7d'], '24h')).toBe('24h')
  })

  it('reads a list as absent, empty or its entries', () => {
    expect(listParam(null)).toBeUndefined()
    expect(listParam('')).toEqual([])
    expect(listParam('a,b')).toEqual(['a', 'b'])
  })

  it("keeps a list's known entries once each, in the link's order, and falls back when none is known", () => {
    expect(knownOf(['b', 'x', 'a', 'b'], ['a', 'b', 'c'], ['a'])).toEqual(['b', 'a'])
    expect(knownOf(['x', 'y'], ['a', 'b'], ['a'])).toEqual(['a'])
    expect(knownOf([], ['a', 'b'], ['a'])).toEqual([])
    expect(knownOf(undefined, ['a', 'b'], ['a'])).toEqual(['a'])
  })

  it('takes a wanted value the page lists, else the first listed', () => {
    expect(listedOr('b', ['a', 'b'])).toBe('b')
    expect(listedOr('z', ['a', 'b'])).toBe('a')
    expect(listedOr('z', [])).toBe('')
  })

  it('reads a page offset as a plain count of at most nine digits, else 0', () => {
    expect(offsetParam('50')).toBe(50)
    expect(offsetParam('999999999')).toBe(999_999_999)
    expect([null, '', '-5', '1e3', ' 5', '1234567890'].map(offsetParam)).toEqual([0, 0, 0, 0, 0, 0])
  })

  it('leaves defaults out of a query', () => {
    expect(changedParams({ range: '7d', res: 'hour' }, { range: '24h', res: 'hour' })).toEqual({ range: '7d' })
  })
})

describe('Feedback view', () => {
  const FULL: FeedbackView = {
    type: 'wandb.runnable.judge & co/ü?',
    metric: 'output.score',
    range: '30d',
    bucket: 3600,
    zone: 'Asia/Tokyo',
    percentiles: [50, 90, 99],
    offset: 25,
  }

  it('leaves every default out, so the plain link stays plain', () => {
    expect(feedbackViewParams(defaultFeedbackView(ZONE), ZONE)).toEqual({})
    expect(routeHash('feedback', [], feedbackViewParams(defaultFeedbackView(ZONE), ZONE), 'acme/bot')).toBe(
      '#/acme/bot/feedback',
    )
  })

  it('round-trips every picker through a route hash', () => {
    // Act
    const hash = routeHash('feedback', [], feedbackViewParams(FULL, ZONE), 'acme/my bot')

    // Assess
    expect(hash).toContain('range=30d&bucket=3600&tz=Asia%2FTokyo&p=50%2C90%2C99&offset=25')
    expect(parseFeedbackView(query(hash), ZONE)).toEqual(FULL)
  })

  it('round-trips no percentile ticked', () => {
    const view = { ...defaultFeedbackView(ZONE), percentiles: [] }
    expect(feedbackViewParams(view, ZONE)).toEqual({ p: '' })
    expect(parseFeedbackView(new URLSearchParams('p='), ZONE)).toEqual(view)
  })

  it.each([
    ['an unknown range', 'range=1y'],
    ['a bucket the page does not offer', 'bucket=7'],
    ['a bucket that is not a number', 'bucket=hourly'],
    ['a time zone the page does not offer', 'tz=Mars%2FOlympus'],
    ['only unknown percentiles', 'p=42,abc'],
    ['an unknown parameter', 'page=7&x=%E0%A4%A'],
    ['a negative offset', 'offset=-25'],
    ['an offset that is not a count', 'offset=2.5e1'],
    ['an offset too large to page to', 'offset=1234567890'],
  ])('reads %s as the default', (_, q) => {
    expect(parseFeedbackView(new URLSearchParams(q), ZONE)).toEqual(defaultFeedbackView(ZONE))
  })

  it('keeps the known percentiles of a list, sorted, beside invalid values', () => {
    expect(parseFeedbackView(new URLSearchParams('p=99,x,50,99&range=&tz=UTC'), ZONE)).toEqual({
      ...defaultFeedbackView(ZONE),
      zone: 'UTC',
      percentiles: [50, 99],
    })
  })
})

describe('Usage view', () => {
  const FULL: UsageView = {
    range: '7d',
    resolution: 'day',
    scope: 'entity',
    groupBy: 'project',
    metric: 'cost_usd',
  }

  it('leaves every default out and round-trips every picker', () => {
    // Act
    const hash = routeHash('usage', [], usageViewParams(FULL), 'acme/bot')

    // Assess
    expect(usageViewParams(DEFAULT_USAGE_VIEW)).toEqual({})
    expect(hash).toBe('#/acme/bot/usage?range=7d&res=day&scope=entity&group=project&metric=cost_usd')
    expect(parseUsageView(query(hash))).toEqual(FULL)
  })

  it('reads unknown values as the defaults, keeping the valid ones', () => {
    expect(parseUsageView(new URLSearchParams('range=5m&res=week&scope=all&group=user&metric=joules'))).toEqual(
      DEFAULT_USAGE_VIEW,
    )
    expect(parseUsageView(new URLSearchParams('res=day&metric=joules'))).toEqual({
      ...DEFAULT_USAGE_VIEW,
      resolution: 'day',
    })
  })
})

describe('Training models', () => {
  const LISTED = ['m1', 'm2', 'm3']

  it('chooses the first model for the plain link, and leaves that choice out of the link', () => {
    expect(chosenModels(new URLSearchParams(''), LISTED)).toEqual(['m1'])
    expect(trainingParams(['m1'], LISTED)).toEqual({})
  })

  it("round-trips several models in the link's order, and none", () => {
    expect(chosenModels(query(routeHash('training', [], trainingParams(['m3', 'm1'], LISTED))), LISTED)).toEqual([
      'm3',
      'm1',
    ])
    expect(trainingParams([], LISTED)).toEqual({ models: '' })
    expect(chosenModels(new URLSearchParams('models='), LISTED)).toEqual([])
  })

  it('drops models the project does not list, and reads a link naming none of its models as the first', () => {
    expect(chosenModels(new URLSearchParams('models=gone,m2'), LISTED)).toEqual(['m2'])
    expect(chosenModels(new URLSearchParams('models=gone'), LISTED)).toEqual(['m1'])
    expect(chosenModels(new URLSearchParams('models=m1'), [])).toEqual([])
  })
})

describe('Training x axis', () => {
  const LISTED = ['m1', 'm2']

  it('leaves the axis out of the link until one is picked, then keeps it beside the models', () => {
    expect(chosenAxis(new URLSearchParams(''))).toBeUndefined()
    expect(trainingParams(['m1'], LISTED, undefined)).toEqual({})
    expect(trainingParams(['m1'], LISTED, 'time')).toEqual({ x: 'time' })
    const link = query(routeHash('training', [], trainingParams(['m2', 'm1'], LISTED, 'step')))
    expect(chosenAxis(link)).toBe('step')
    expect(chosenModels(link, LISTED)).toEqual(['m2', 'm1'])
  })

  it('reads an axis no chart offers as none picked', () => {
    expect(chosenAxis(new URLSearchParams('x=time'))).toBe('time')
    expect(chosenAxis(new URLSearchParams('x=wall'))).toBeUndefined()
    expect(chosenAxis(new URLSearchParams('x='))).toBeUndefined()
  })
})

describe('Objects version', () => {
  const VERSIONS = [
    { digest: 'd2', is_latest: 1 as const },
    { digest: 'd1', is_latest: 0 as const },
  ]

  it("shows the link's version, else the latest", () => {
    expect(chosenVersion(query(routeHash('objects', ['settings'], { digest: 'd1' })), VERSIONS)).toBe('d1')
    expect(chosenVersion(new URLSearchParams(''), VERSIONS)).toBe('d2')
    expect(chosenVersion(new URLSearchParams('digest=nope'), VERSIONS)).toBe('d2')
    expect(chosenVersion(new URLSearchParams('digest=d1'), [{ digest: 'd1', is_latest: 0 }])).toBe('d1')
    expect(chosenVersion(new URLSearchParams('digest=d1'), [])).toBeUndefined()
  })
})

describe('Objects rows page', () => {
  it("reads the rows table's first row from `rows`, 0 when absent or not a plain count", () => {
    expect(chosenRowsOffset(query(routeHash('objects', ['questions'], { digest: 'd1', rows: '50' })))).toBe(50)
    expect(chosenRowsOffset(new URLSearchParams(''))).toBe(0)
    for (const bad of ['', '-50', '1.5', 'abc', '1e3', '1234567890']) {
      expect(chosenRowsOffset(new URLSearchParams({ rows: bad }))).toBe(0)
    }
  })

  it('writes the version and the rows page, the latest version and the first page left out', () => {
    expect(objectViewParams('d1', 50)).toEqual({ digest: 'd1', rows: '50' })
    expect(objectViewParams('d1', 0)).toEqual({ digest: 'd1' })
    expect(objectViewParams(undefined, 50)).toEqual({ rows: '50' })
    expect(objectViewParams(undefined, 0)).toEqual({})
    expect(routeHash('objects', ['questions'], objectViewParams('d1', 50), 'acme/bot')).toBe(
      '#/acme/bot/objects/questions?digest=d1&rows=50',
    )
  })

  it('reads back what it writes', () => {
    for (const rows of [0, 50, 100]) {
      const params = query(routeHash('objects', ['questions'], objectViewParams('d1', rows), 'acme/bot'))
      expect([chosenRowsOffset(params), params.get('digest')]).toEqual([rows, 'd1'])
    }
  })
})
