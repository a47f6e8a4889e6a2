import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lockDataDir, lockFile } from '../../scripts/local/data-dir-lock.js'
import { SetupError } from '../../scripts/local/setup-error.js'
import { tempDirs } from '../support/temp-dirs.js'

const tempDir = tempDirs('loom-lock-')

describe('data directory lock', () => {
  it('lets one holder in, refuses the next while it holds, and lets the next in once released', async () => {
    // Prepare
    const dir = await tempDir()
    const first = await lockDataDir(dir, 'npm start')

    // Act
    await first.update({ port: 8931 })
    const written = JSON.parse(await readFile(lockFile(dir), 'utf8')) as unknown
    const refused = await lockDataDir(dir, 'npm run keys').then(
      () => new Error('locked twice'),
      (error: unknown) => error as Error,
    )
    await first.release()
    const afterRelease = await readdir(dir)
    const second = await lockDataDir(dir, 'npm run keys')
    await second.release()

    // Assess
    expect(written).toEqual({ pid: process.pid, command: 'npm start', port: 8931 })
    expect(refused.message).toContain(`is in use by another Loom (npm start, pid ${process.pid}, port 8931)`)
    expect(afterRelease).toEqual([])
  })

  it("takes over a lock naming this process's pid that an earlier process left (a restarted container)", async () => {
    // Prepare
    const dir = await tempDir()
    await writeFile(lockFile(dir), JSON.stringify({ pid: process.pid, command: 'npm start', port: 8700 }))

    // Act
    const lock = await lockDataDir(dir, 'npm start')
    const written = JSON.parse(await readFile(lockFile(dir), 'utf8')) as unknown
    await lock.release()

    // Assess
    expect(written).toEqual({ pid: process.pid, command: 'npm start' })
  })

  it('takes over a lock file left half-written, and leaves alone a lock another holder took since', async () => {
    // Prepare
    const dir = await tempDir()
    await writeFile(lockFile(dir), '{"pid": 12')

    // Act
    const lock = await lockDataDir(dir, 'npm start')
    const taken = JSON.parse(await readFile(lockFile(dir), 'utf8')) as unknown
    // Another process removed the file and took the directory (as after a stale lock): release must not remove it.
    await writeFile(lockFile(dir), JSON.stringify({ pid: process.pid + 1, command: 'npm start' }))
    await lock.release()
    const entries = await readdir(dir)

    // Assess
    expect(taken).toEqual({ pid: process.pid, command: 'npm start' })
    expect(entries).toEqual(['loom.lock'])
  })

  it('refuses a directory that cannot be created with a SetupError naming it and the reason in words (QA)', async () => {
    // Prepare
    const dir = await tempDir()
    const file = join(dir, 'afile')
    await writeFile(file, '')
    const lock = (dataDir: string) =>
      lockDataDir(dataDir, 'npm start').then(
        () => new Error('locked'),
        (error: unknown) => error as Error,
      )

    // Act
    const throughFile = await lock(join(file, 'data'))
    const isFile = await lock(file)

    // Assess
    expect(throughFile).toBeInstanceOf(SetupError)
    expect(throughFile.message).toBe(
      `the data directory ${join(file, 'data')} cannot be used: a part of its path is a file, not a directory ` +
        '(ENOTDIR); set LOOM_DATA_DIR to a directory this user can write',
    )
    expect(isFile).toBeInstanceOf(SetupError)
    expect(isFile.message).toBe(
      `the data directory ${file} cannot be used: it exists but is not a directory (EEXIST); ` +
        'set LOOM_DATA_DIR to a directory this user can write',
    )
    expect(await readdir(dir)).toEqual(['afile'])
  })
})
