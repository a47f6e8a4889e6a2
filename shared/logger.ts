import { Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger'

/** The structured JSON logger every function and the local server write through (Powertools). */
export const logger = new Logger({ serviceName: 'loom' })

let info: boolean | undefined

/**
 * Whether INFO lines are printed (the level is set once, from the environment, at start). Checked before the
 * per-request line: Powertools reads the environment on every call, even for a line it then drops, and in its `level`
 * getter too, so the answer is kept.
 */
export function infoEnabled(): boolean {
  info ??= logger.level <= LogLevelThreshold.INFO
  return info
}
