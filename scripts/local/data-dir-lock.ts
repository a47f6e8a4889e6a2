import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { SetupError } from './setup-error.js'

/** Who holds a data directory: the process, what it runs, and once it listens, its port. */
export type DataDirHolder = { pid: number; command: string; port?: number }

/** A held data directory: `update` adds what becomes known later (the port), `release` frees it. */
export type DataDirLock = { update: (details: { port: number }) => Promise<void>; release: () => Promise<void> }

/** The file that says which process holds a local data directory (`npm start`, or a CLI opening it directly). */
export function lockFile(dataDir: string): string {
  return join(dataDir, 'loom.lock')
}

// The lock files this process holds: a file naming this process's pid but not listed here was left by an earlier
// process that had the same pid (a container restarted with the same data volume), and is stale.
const held = new Set<string>()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function readHolder(file: string): Promise<DataDirHolder | undefined> {
  try {
    const holder = JSON.parse(await readFile(file, 'utf8')) as Partial<DataDirHolder>
    return Number.isSafeInteger(holder.pid) ? (holder as DataDirHolder) : undefined
  } catch {
    // Gone, or half-written by a process that died while writing it: no holder.
    return undefined
  }
}

function holds(file: string, holder: DataDirHolder | undefined): holder is DataDirHolder {
  if (holder === undefined) return false
  return holder.pid === process.pid ? held.has(file) : alive(holder.pid)
}

function busy(dataDir: string, holder: DataDirHolder): SetupError {
  const port = holder.port === undefined ? '' : `, port ${holder.port}`
  return new SetupError(
    `the data directory ${resolve(dataDir)} is in use by another Loom (${holder.command}, pid ${holder.pid}${port}): ` +
      'stop it, or set LOOM_DATA_DIR to another directory',
  )
}

/**
 * Takes a local data directory for this process, before anything in it is opened or written: only one process may
 * open its embedded DynamoDB (a second one would fail on its first request and overwrite the published endpoint).
 * A lock left by a process that is gone (a crash, a kill) is taken over. Throws a `SetupError` naming the holder when
 * a live process holds it.
 */
export async function lockDataDir(dataDir: string, command: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true })
  const file = resolve(lockFile(dataDir))
  const mine: DataDirHolder = { pid: process.pid, command }
  // Two tries: the second follows the removal of a stale lock, unless another process took it in between.
  for (let tries = 0; tries < 2; tries++) {
    try {
      await writeFile(file, JSON.stringify(mine), { flag: 'wx' })
      held.add(file)
      return {
        update: async ({ port }) => {
          mine.port = port
          if (held.has(file)) await writeFile(file, JSON.stringify(mine))
        },
        release: async () => {
          if (!held.delete(file)) return
          if ((await readHolder(file))?.pid === process.pid) await rm(file, { force: true })
        },
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = await readHolder(file)
    if (holds(file, holder)) throw busy(dataDir, holder)
    await rm(file, { force: true })
  }
  throw new SetupError(`the data directory ${resolve(dataDir)} is being taken by another process: try again`)
}
