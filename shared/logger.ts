import { Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger'

/** The structured JSON logger every function and the local server write through (Powertools). */
export const logger = new Logger({ serviceName: 'loom' })

/**
 * Whether INFO lines are printed. Checked before the per-request line: Powertools reads the X-Ray trace id from the
 * environment on every call, even for a line it then drops.
 */
export function infoEnabled(): boolean {
  return logger.level <= LogLevelThreshold.INFO
}
