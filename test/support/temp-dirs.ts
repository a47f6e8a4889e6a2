import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

/**
 * A maker of fresh temporary directories named `<prefix>…` for a test file (a stack's data directory, say); every
 * directory it made is removed once the file's tests are done.
 */
export function tempDirs(prefix: string): () => Promise<string> {
  const made: string[] = []
  afterAll(async () => {
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })))
  })
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    made.push(dir)
    return dir
  }
}
