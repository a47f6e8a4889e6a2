import { readPriceTable } from '#shared/tracing/costs'
import { SetupError } from './setup-error.js'

/**
 * Checks `LOOM_PRICES_FILE` as `npm start` begins, as `checkModelsFile` checks the models file: an unusable table
 * stops the start with one line naming the file and its first problem (the line and column of a syntax error, or the
 * first bad row), rather than failing every request that prices calls later. The format is docs/prices.md's.
 */
export async function checkPricesFile(file: string): Promise<void> {
  try {
    await readPriceTable(file, `LOOM_PRICES_FILE ${file}`)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (typeof code === 'string') {
      throw new SetupError(`LOOM_PRICES_FILE ${file} cannot be read (${code})`, { cause: error })
    }
    // Its message names the file and the line and column, or the row; never the text around a syntax error.
    throw new SetupError((error as Error).message, { cause: error })
  }
}
