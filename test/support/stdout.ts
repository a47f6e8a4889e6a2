import { vi } from 'vitest'

/**
 * Captures what is written to process.stdout from now on (Powertools writes its EMF metric records and log lines
 * there through its own Console), instead of printing it; the spy is undone by the file's `restoreAllMocks`.
 */
export function captureStdout(): string[] {
  const written: string[] = []
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk))
    return true
  })
  return written
}
