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

// Why a directory cannot be created or a lock file written in it, in words (the code follows in parentheses).
const FILE_SYSTEM_REASONS: Record<string, string> = {
  ENOTDIR: 'a part of its path is a file, not a directory',
  EEXIST: 'it exists but is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'its path has a symbolic link loop',
}

/**
 * The error to throw for a failed file-system step on the data directory (creating it, writing or removing its lock
 * file): a failure with an error code becomes a `SetupError` naming the directory and saying why in words, since an
 * unusable LOOM_DATA_DIR is a setup problem explained in one line, not a stack trace; anything else is kept.
 */
function unusable(dataDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return error
  const reason = FILE_SYSTEM_REASONS[code] ?? 'the file system refused it'
  return new SetupError(
    `the data directory ${resolve(dataDir)} cannot be used: ${reason} (${code}); ` +
      'set LOOM_DATA_DIR to a directory this user can write',
    { cause: error },
  )
}

async function onDataDir(dataDir: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step()
  } catch (error) {
    throw unusable(dataDir, error)
  }
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
 * a live process holds it, and one naming the directory and the reason when it cannot be created or written (a path
 * through a file, no permission, a read-only or full file system).
 */
export async function lockDataDir(dataDir: string, command: string): Promise<DataDirLock> {
  await onDataDir(dataDir, () => mkdir(dataDir, { recursive: true }))
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
      // EEXIST: another process's lock, or a stale one, looked at below.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw unusable(dataDir, error)
    }
    const holder = await readHolder(file)
    if (holds(file, holder)) throw busy(dataDir, holder)
    await onDataDir(dataDir, () => rm(file, { force: true }))
  }
  throw new SetupError(`the data directory ${resolve(dataDir)} is being taken by another process: try again`)
}
