import { describe, expect, it } from 'vitest'
import { type BannerFacts, bannerLines, connectableUrl } from '../../scripts/local/banner.js'
import { listenError, SetupError, setupFailureLine } from '../../scripts/local/setup-error.js'

const FACTS: BannerFacts = {
  host: '127.0.0.1',
  port: 8700,
  storage: 'dynalite, .loom-data',
  tableName: 'loom',
  memoryEndpoint: undefined,
  boot: { kind: 'none' },
}

describe('start banner', () => {
  it('names a connectable address for wildcard hosts and brackets IPv6 literals', () => {
    // Act
    const urls = ['0.0.0.0', '::', '127.0.0.1', '::1', 'example.test'].map((host) => connectableUrl(host, 8700))

    // Assess
    expect(urls).toEqual([
      'http://127.0.0.1:8700',
      'http://localhost:8700',
      'http://127.0.0.1:8700',
      'http://[::1]:8700',
      'http://example.test:8700',
    ])
  })

  it('tells how the CLIs reach an in-memory DynamoDB, with the table when it is not the default', () => {
    // Act
    const memory = bannerLines({ ...FACTS, memoryEndpoint: 'http://127.0.0.1:4567', tableName: 'mine' }).join('\n')
    const persisted = bannerLines(FACTS).join('\n')

    // Assess
    expect(memory).toContain('DYNAMODB_ENDPOINT=http://127.0.0.1:4567 LOOM_TABLE_NAME=mine npm run keys -- …')
    expect(persisted).not.toContain('DYNAMODB_ENDPOINT')
    expect(persisted).toMatch(/Press Ctrl-C to stop\.$/)
  })
})

describe('start failures', () => {
  it('explains setup errors and rejected settings in one line, and leaves other errors to their stack trace', () => {
    // Prepare
    const busy = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' })
    const odd = Object.assign(new Error('listen EMFILE'), { code: 'EMFILE' })

    // Act
    const port = setupFailureLine(listenError(busy, '127.0.0.1', 8931))
    const setting = setupFailureLine(new Error('PORT environment variable must be an integer >= 0, got "x"'))
    const setup = setupFailureLine(new SetupError('no Java'))
    const unexpected = setupFailureLine(listenError(odd, '127.0.0.1', 8931))

    // Assess
    expect(port).toBe('port 8931 on 127.0.0.1 is in use (set PORT to another port, or stop what listens there)')
    expect(setting).toBe('PORT environment variable must be an integer >= 0, got "x"')
    expect(setup).toBe('no Java')
    expect(unexpected).toBeUndefined()
  })
})
