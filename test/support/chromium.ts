import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/**
 * Executable names looked up on `PATH`, in this order, when `LOOM_CHROMIUM` is unset. Chromium's headless shell first
 * (Debian's `chromium-headless-shell`, the build Playwright itself runs headless tests in): the same Blink and V8 as
 * the browser without its UI layers, and about a fifth less CPU for the Console's browser tests on 2 cores.
 */
export const CHROMIUM_NAMES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome'] as const

/** The line `npm test` prints when the console's browser tests cannot run. */
export const CHROMIUM_MISSING =
  'Console browser tests skipped: no Chromium found (LOOM_CHROMIUM, or chromium-headless-shell, chromium, ' +
  'chromium-browser or google-chrome on PATH). Install it with `apt-get install -y chromium-headless-shell` ' +
  '(Debian/Ubuntu) or set LOOM_CHROMIUM=<path>.'

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The Chromium the browser tests and `npm run bench:console` drive: `LOOM_CHROMIUM` when set (it must be executable),
 * else the first of `CHROMIUM_NAMES` found on `PATH`; undefined when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.LOOM_CHROMIUM?.trim()
  if (explicit !== undefined && explicit !== '') {
    if (!executable(explicit)) throw new Error(`LOOM_CHROMIUM is set to "${explicit}", which is not an executable`)
    return explicit
  }
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d !== '')
  for (const name of CHROMIUM_NAMES) {
    for (const dir of dirs) {
      const path = join(dir, name)
      if (executable(path)) return path
    }
  }
  return undefined
}
