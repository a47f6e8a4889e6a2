import { afterEach, describe, expect, it, vi } from 'vitest'
import { runScript } from '../../scripts/local/run-script.js'
import { SetupError } from '../../scripts/local/setup-error.js'

describe('runScript (the keys and models scripts)', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('explains a setting rejected while the CLI loads in one line and exits 1', async () => {
    // Prepare
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)

    // Act
    const status = await runScript(async () => {
      throw new Error(`LOOM_DYNAMODB environment variable must be 'dynalite' or 'local', got "foo"`)
    })

    // Assess
    expect(status).toBe(1)
    expect(stderr.mock.calls.map((c) => c[0])).toEqual([
      `Loom: LOOM_DYNAMODB environment variable must be 'dynalite' or 'local', got "foo"\n`,
    ])
  })

  it('explains a setup problem the command meets in one line and exits 1', async () => {
    // Prepare
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)

    // Act
    const status = await runScript(async () => async () => {
      throw new SetupError('the data directory /d is in use by another Loom')
    })

    // Assess
    expect(status).toBe(1)
    expect(stderr).toHaveBeenCalledWith('Loom: the data directory /d is in use by another Loom\n')
  })

  it("gives the command's own status, and lets an unexpected error through with its stack", async () => {
    // Act
    const status = await runScript(async () => async (argv) => (Array.isArray(argv) ? 2 : 0))
    const failure = runScript(async () => {
      throw new TypeError('boom')
    })

    // Assess
    expect(status).toBe(2)
    await expect(failure).rejects.toThrow(TypeError)
  })
})
