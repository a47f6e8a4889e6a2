import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { authenticateKey, clearAuthCache } from '#shared/auth/authenticate'
import { getApiKey } from '#shared/db/api-key-repository'
import { keysCli } from '../../scripts/local/keys-cli.js'
import { runCli, spawnCli } from '../support/cli.js'

const keys = (...args: string[]) => runCli(keysCli, ...args)

describe('npm run keys limits', () => {
  it('creates a key with limits, changes and removes them with set-limits, and the principal carries them', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const entity = `ent-${randomUUID().slice(0, 8)}`

    // Act
    const created = await keys(
      'create',
      '--user',
      user,
      '--entity',
      entity,
      '--rpm',
      '30',
      '--tpm',
      '5000',
      '--concurrency',
      '2',
    )
    const key = /API key \(shown once, store it now\): (\S+)/.exec(created.stdout)?.[1] ?? ''
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''
    const stored = await getApiKey(keyId)
    clearAuthCache()
    const principal = await authenticateKey(key)
    const changed = await keys('set-limits', keyId, '--rpm', 'none', '--concurrency', '5')
    const afterChange = await getApiKey(keyId)
    const listed = await keys('list', '--user', user)

    // Assess
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('(rpm=30 tpm=5000 concurrency=2)')
    expect(stored).toMatchObject({ rpm: 30, tpm: 5000, concurrency: 2 })
    expect(principal.limits).toEqual({ rpm: 30, tpm: 5000, concurrency: 2 })
    expect(changed.code).toBe(0)
    expect(changed.stdout).toContain(`Limits of ${keyId}: tpm=5000 concurrency=5.`)
    expect(afterChange?.rpm).toBeUndefined()
    expect(afterChange).toMatchObject({ tpm: 5000, concurrency: 5 })
    expect(listed.stdout).toContain('tpm=5000 concurrency=5')
  })

  it('refuses bad limit values, an unknown key and a set-limits without limits', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`

    // Act
    const zero = await keys('create', '--user', user, '--entity', 'e-bad', '--rpm', '0')
    const none = await keys('create', '--user', user, '--entity', 'e-bad', '--tpm', 'none')
    const unknown = await keys('set-limits', 'nokey', '--rpm', '3')
    const empty = await keys('set-limits', 'nokey')
    const listed = await keys('list', '--user', user)

    // Assess
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain('--rpm must be a positive integer')
    expect(none.code).toBe(2)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('No key with id nokey')
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('needs at least one of')
    expect(listed.stdout).toContain('No keys.')
  })

  it('answers a malformed command line with the message and the usage (status 2), not a stack trace', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`

    // Act
    const unknown = await keys('create', '--user', user, '--entity', 'acme', '--bogus')
    const missing = await keys('create', '--user', user, '--entity', 'acme', '--rpm')
    const stray = await keys('revoke', 'some-key', '--rpm', '5')
    const listed = await keys('list', '--user', user)

    // Assess
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--bogus'")
    expect(unknown.stderr).toContain('Usage: npm run keys')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("Option '--rpm <value>' argument missing")
    expect(missing.stderr).toContain('Usage: npm run keys')
    expect(stray.code).toBe(2)
    expect(stray.stderr).toContain("'revoke' does not take --rpm")
    expect(listed.stdout).toContain('No keys.')
  })

  it('refuses a limit beyond its maximum, which the usage names, and accepts the maximum itself', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const created = await keys('create', '--user', user, '--entity', 'e-max', '--rpm', '30')
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''

    // Act
    const unsafe = await keys('set-limits', keyId, '--rpm', '99999999999999999999')
    const over = await keys('create', '--user', user, '--entity', 'e-max', '--concurrency', '10001')
    const atMax = await keys('set-limits', keyId, '--tpm', '1000000000')
    const stored = await getApiKey(keyId)
    const help = await keys('--help')

    // Assess
    expect(unsafe.code).toBe(2)
    expect(unsafe.stderr).toContain("--rpm must be a positive integer up to 1000000 or 'none'")
    expect(over.code).toBe(2)
    expect(over.stderr).toContain('--concurrency must be a positive integer up to 10000')
    expect(atMax.code).toBe(0)
    expect(stored).toMatchObject({ rpm: 30, tpm: 1_000_000_000 })
    expect(help.stdout).toContain('--rpm <n>            requests per minute (at most 1000000)')
    expect((await keys('list', '--user', user)).stdout.match(/^\S+ {2}user=/gm)).toHaveLength(1)
  })

  it('prints the usage for --help (status 0) and without a command (2), and refuses an unknown command (2)', async () => {
    // Act
    const help = await keys('--help')
    const bare = await keys()
    const unknown = await keys('rotate')

    // Assess
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: npm run keys -- <command> [options]')
    expect(bare.code).toBe(2)
    expect(bare.stdout).toBe(help.stdout)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown command 'rotate'")
    expect(unknown.stdout).toBe('')
  })

  it('runs as a script: a usage error after reading the table exits with status 2', async () => {
    // Act
    const unknown = await spawnCli('scripts/keys.ts', 'set-limits', 'nokey', '--rpm', '3')

    // Assess
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('No key with id nokey')
    expect(unknown.stderr).toContain('Usage: npm run keys')
  }, 60_000)
})
