import { Logger } from '@aws-lambda-powertools/logger'

/** The structured JSON logger every function and the local server write through (Powertools). */
export const logger = new Logger({ serviceName: 'loom' })
