import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { authenticateKey, clearAuthCache } from '#shared/auth/authenticate'
import { config, localConfig } from '#shared/config'
import { getApiKey, revokeApiKey } from '#shared/db/api-key-repository'
import { lockDataDir } from '../../scripts/local/data-dir-lock.js'
import { keysCli } from '../../scripts/local/keys-cli.js'
import { runCli, spawnCli } from '../support/cli.js'
import { holdDynamoCommands } from '../support/hold-dynamo.js'

const keys = (...args: string[]) => runCli(keysCli, ...args)

// Well-formed (20 hex characters, as `keys list` prints them) and unique per call, so it names no stored key.
const unknownKeyId = () => randomUUID().replaceAll('-', '').slice(0, 20)

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
    const keyId = unknownKeyId()

    // Act
    const zero = await keys('create', '--user', user, '--entity', 'e-bad', '--rpm', '0')
    const none = await keys('create', '--user', user, '--entity', 'e-bad', '--tpm', 'none')
    const unknown = await keys('set-limits', keyId, '--rpm', '3')
    const empty = await keys('set-limits', keyId)
    const listed = await keys('list', '--user', user)

    // Assess
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain('--rpm must be a positive integer')
    expect(none.code).toBe(2)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(`No key with id ${keyId}; \`keys list\` shows the ids\n`)
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

  it('refuses an argument the command does not take (status 2, naming it), for every command, writing nothing', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const created = await keys('create', '--user', user, '--entity', 'e-args', '--rpm', '30')
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''

    // Act: the README's usage pasted with its brackets, and stray words.
    const bracketed = await keys('list', '[--user', `${user}]`)
    const bare = await keys('list', user)
    const limits = await keys('set-limits', keyId, '--rpm', '60', '--concurrency', '4', '[--tpm', 'none]')
    const create = await keys('create', '--user', user, '--entity', 'e-args', 'extra')
    const member = await keys('add-member', '--user', user, '--entity', 'e-other', 'extra')
    const revoke = await keys('revoke', keyId, 'extra')
    const stored = await getApiKey(keyId)
    const listed = await keys('list', '--user', user)

    // Assess
    for (const refused of [bracketed, bare, limits, create, member, revoke]) {
      expect(refused.code).toBe(2)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toContain('Usage: npm run keys')
    }
    expect(bracketed.stderr).toContain(
      "Unexpected argument '[--user': 'list' takes no arguments, only options (leave out the usage's [ ]: they mark what is optional)",
    )
    expect(bare.stderr).toContain(`Unexpected argument '${user}': 'list' takes no arguments, only options\n`)
    expect(limits.stderr).toContain("Unexpected argument '[--tpm': 'set-limits' takes <key-id> only")
    expect(create.stderr).toContain("Unexpected argument 'extra': 'create' takes no arguments")
    expect(member.stderr).toContain("Unexpected argument 'extra': 'add-member' takes no arguments")
    expect(revoke.stderr).toContain("Unexpected argument 'extra': 'revoke' takes <key-id> only")
    expect(stored).toMatchObject({ rpm: 30 })
    expect(stored?.concurrency).toBeUndefined()
    expect(stored?.revokedAt).toBeUndefined()
    expect(listed.stdout.match(/^\S+ {2}user=/gm)).toHaveLength(1)
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
    const empty = await spawnCli('scripts/keys.ts', 'set-limits', unknownKeyId())

    // Assess
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('set-limits needs at least one of --rpm, --tpm, --concurrency')
    expect(empty.stderr).toContain('Usage: npm run keys')
  }, 60_000)
})

describe('npm run keys with a key id', () => {
  it('answers an id that names no key in one line with status 1, for revoke and set-limits', async () => {
    // Prepare
    const keyId = unknownKeyId()

    // Act
    const revoke = await keys('revoke', keyId)
    const limits = await keys('set-limits', keyId, '--rpm', '5')

    // Assess
    for (const refused of [revoke, limits]) {
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toBe(`No key with id ${keyId}; \`keys list\` shows the ids\n`)
    }
  })

  it('never prints a plaintext key given as an id (status 1), and leaves the key as it was', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const created = await keys('create', '--user', user, '--entity', 'e-paste', '--rpm', '30')
    const key = /API key \(shown once, store it now\): (\S+)/.exec(created.stdout)?.[1] ?? ''
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''
    const configured = `cfg-${randomUUID()}` // a configured (bootstrap) key: no prefix, longer than an id
    const short = 'dev-key' // a short configured key: neither an id nor surely a key

    // Act
    const pasted = [
      await keys('revoke', key),
      await keys('set-limits', key, '--rpm', '5'),
      await keys('revoke', configured),
      await keys('set-limits', configured, '--rpm', '5'),
    ]
    const shortOnes = [await keys('revoke', short), await keys('set-limits', short, '--rpm', '5')]
    const stored = await getApiKey(keyId)

    // Assess
    expect(key).toMatch(/^loom_/)
    for (const refused of pasted) {
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toBe('That looks like an API key, not a key id; `keys list` shows the ids\n')
    }
    for (const refused of shortOnes) {
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toBe('That is not a key id; `keys list` shows the ids\n')
    }
    expect(stored?.revokedAt).toBeUndefined()
    expect(stored?.rpm).toBe(30)
  })

  it('refuses set-limits on a revoked key in one line naming it (status 1), writing nothing', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const created = await keys('create', '--user', user, '--entity', 'e-revoked', '--rpm', '30')
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''
    await keys('revoke', keyId)
    const revokedAt = (await getApiKey(keyId))?.revokedAt

    // Act
    const refused = await keys('set-limits', keyId, '--rpm', '5', '--tpm', '100')
    const stored = await getApiKey(keyId)

    // Assess
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(`Key ${keyId} is revoked (${revokedAt}); its limits cannot change\n`)
    expect(stored).toMatchObject({ rpm: 30, revokedAt })
    expect(stored?.tpm).toBeUndefined()
  })

  it('refuses set-limits when a revoke lands between its start and its write (the write is conditional)', async () => {
    // Prepare
    const user = `user-${randomUUID().slice(0, 8)}`
    const created = await keys('create', '--user', user, '--entity', 'e-race', '--rpm', '30')
    const keyId = /Created key (\S+)/.exec(created.stdout)?.[1] ?? ''
    const hold = holdDynamoCommands(
      ({ name, input }) => name === 'UpdateItemCommand' && String(input.UpdateExpression).startsWith('SET rpm'),
    )

    try {
      // Act: the limits' write waits while the key is revoked.
      const pending = keys('set-limits', keyId, '--rpm', '5')
      await hold.arrived()
      await revokeApiKey(keyId, new Date().toISOString())
      hold.release()
      const refused = await pending
      const stored = await getApiKey(keyId)

      // Assess
      expect(refused.code).toBe(1)
      expect(refused.stderr).toBe(`Key ${keyId} is revoked (${stored?.revokedAt}); its limits cannot change\n`)
      expect(stored?.rpm).toBe(30)
    } finally {
      hold.stop()
    }
  })
})

describe('npm run keys on the local data directory', () => {
  it('says on stderr which data directory it opens when no stack answers, and frees it afterwards', async () => {
    // Prepare: no DYNAMODB_ENDPOINT or LOOM_TABLE_NAME, as after `npm start` with LOOM_MEMORY=1.
    const dataDir = await mkdtemp(join(tmpdir(), 'loom-keys-'))
    const before = { endpoint: config.dynamoEndpoint, table: config.tableName, dataDir: localConfig.dataDir }
    Object.assign(config, { dynamoEndpoint: undefined, tableName: undefined })
    localConfig.dataDir = dataDir

    // Act
    const listed = await keys('list')
    Object.assign(config, { dynamoEndpoint: before.endpoint, tableName: before.table })
    localConfig.dataDir = before.dataDir
    const entries = await readdir(dataDir)
    await rm(dataDir, { recursive: true, force: true })

    // Assess
    expect(listed.code).toBe(0)
    expect(listed.stdout).toBe('No keys.\n')
    expect(listed.stderr).toMatch(
      new RegExp(
        `^Loom: no running stack answers for ${dataDir}: using that data directory \\(LOOM_DATA_DIR\\) directly .*DYNAMODB_ENDPOINT.*\\n$`,
      ),
    )
    expect(entries).toContain('dynamodb')
    expect(entries).not.toContain('loom.lock')
  })

  it('refuses in one line (status 1) a data directory another Loom holds without answering, opening nothing', async () => {
    // Prepare
    const dataDir = await mkdtemp(join(tmpdir(), 'loom-keys-'))
    const holder = await lockDataDir(dataDir, 'npm start')
    const before = { endpoint: config.dynamoEndpoint, table: config.tableName, dataDir: localConfig.dataDir }
    Object.assign(config, { dynamoEndpoint: undefined, tableName: undefined })
    localConfig.dataDir = dataDir

    // Act
    const refused = await keys('create', '--user', 'u', '--entity', 'e')
    Object.assign(config, { dynamoEndpoint: before.endpoint, tableName: before.table })
    localConfig.dataDir = before.dataDir
    const entries = await readdir(dataDir)
    await holder.release()
    await rm(dataDir, { recursive: true, force: true })

    // Assess
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      `Loom: the data directory ${dataDir} is in use by another Loom (npm start, pid ${process.pid}): ` +
        'stop it, or set LOOM_DATA_DIR to another directory\n',
    )
    expect(entries).toEqual(['loom.lock'])
  })

  it('refuses in one line (status 1) a LOOM_DATA_DIR that is a file, naming it and why (QA)', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-keys-'))
    const dataDir = join(dir, 'afile')
    await writeFile(dataDir, '')
    const before = { endpoint: config.dynamoEndpoint, table: config.tableName, dataDir: localConfig.dataDir }
    Object.assign(config, { dynamoEndpoint: undefined, tableName: undefined })
    localConfig.dataDir = dataDir

    // Act
    const refused = await keys('list')
    Object.assign(config, { dynamoEndpoint: before.endpoint, tableName: before.table })
    localConfig.dataDir = before.dataDir
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      `Loom: the data directory ${dataDir} cannot be used: it exists but is not a directory (EEXIST); ` +
        'set LOOM_DATA_DIR to a directory this user can write\n',
    )
  })
})
