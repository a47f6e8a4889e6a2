import { readFile } from 'node:fs/promises'
import { DuplicateModelIdError, parseCatalogFile } from '#shared/inference/catalog'
import { JsonSyntaxError } from '#shared/json-file'
import { SetupError } from './setup-error.js'

/**
 * Checks `LOOM_MODELS_FILE` as `npm start` begins, so an unusable file stops the start with one line naming the file
 * and its first problem, rather than answering 503 to every request (the gateway still does that where nothing
 * checked the file first). The format is the one `npm run models -- list --json` prints (README.md, Models).
 */
export async function checkModelsFile(file: string): Promise<void> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new SetupError(`LOOM_MODELS_FILE ${file} cannot be read (${code})`, { cause: error })
  }
  try {
    parseCatalogFile(text, `LOOM_MODELS_FILE ${file}`)
  } catch (error) {
    // Its message has the line and column, never the file's text (a pasted key may be in it); an id named twice is
    // no matter of format.
    if (error instanceof JsonSyntaxError || error instanceof DuplicateModelIdError) {
      throw new SetupError(error.message, { cause: error })
    }
    const hint = 'one model object or an array of them, as `npm run models -- list --json` prints'
    throw new SetupError(`${(error as Error).message} (expected ${hint})`, { cause: error })
  }
}
