import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { config } from '#shared/config'
import { getModel } from '#shared/db/model-repository'
import { modelsCli } from '../../scripts/local/models-cli.js'
import { runCli, spawnCli } from '../support/cli.js'
import { putRawModel } from '../support/models.js'

const models = (...args: string[]) => runCli(modelsCli, ...args)

afterEach(() => {
  config.inference.modelsFile = undefined
})

// Writes a catalog file in a fresh temporary folder; returns its path and a cleanup.
async function catalogFile(content: unknown): Promise<{ file: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
  const file = join(dir, 'models.json')
  await writeFile(file, JSON.stringify(content))
  return { file, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

describe('npm run models', () => {
  it('adds, lists and removes a model in the configured table', async () => {
    // Prepare
    const id = `org/cli-${randomUUID().slice(0, 8)}`

    // Act
    const added = await models(
      'add',
      id,
      '--base-url',
      'http://127.0.0.1:8000/v1',
      '--entities',
      'team-a,team-b',
      '--api-key-ref',
      'env:UPSTREAM_KEY',
      '--scheduling',
      'priority',
      '--no-chat-template',
      '--price-prompt',
      '0.000001',
      '--price-completion',
      '0.000002',
      '--max-model-len',
      '4096',
    )
    const stored = await getModel(id)
    const listed = await models('list', '--json')
    const removed = await models('remove', id)
    const gone = await getModel(id)

    // Assess
    expect(added.code).toBe(0)
    expect(stored).toEqual({
      id,
      backend: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyRef: 'env:UPSTREAM_KEY' },
      entities: ['team-a', 'team-b'],
      hasChatTemplate: false,
      scheduling: 'priority',
      maxModelLen: 4096,
      prices: { prompt: 0.000001, completion: 0.000002 },
    })
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((m) => m.id)).toContain(id)
    expect(removed.code).toBe(0)
    expect(gone).toBeUndefined()
  })

  it('refuses a plaintext credential and incomplete input without writing, and an unknown id in one line', async () => {
    // Prepare
    const id = `org/cli-${randomUUID().slice(0, 8)}`

    // Act
    const secret = await models('add', id, '--base-url', 'http://x/v1', '--entities', '*', '--api-key', 'sk-plain')
    const noEntities = await models('add', id, '--base-url', 'http://x/v1')
    const missing = await models('remove', id)

    // Assess
    expect(secret.code).toBe(2)
    expect(secret.stderr).toContain('Credentials are never stored in the catalog')
    expect(noEntities.code).toBe(2)
    // An id that names no model is not a command-line mistake: one line and status 1, without the usage (QA).
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(`No model with id ${id}; \`models list\` shows the ids\n`)
    expect(await getModel(id)).toBeUndefined()
  })

  it('imports a catalog file', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `org/file-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    await writeFile(file, JSON.stringify([{ id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'loom' }]))

    // Act
    const imported = await models('import', file)
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(imported.code).toBe(0)
    expect(await getModel(id)).toEqual({ id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'loom' })
  })

  it('stores per-project limits given as flags and refuses a limit that is not a positive integer', async () => {
    // Prepare
    const id = `org/limits-${randomUUID().slice(0, 8)}`
    const bad = `org/bad-${randomUUID().slice(0, 8)}`

    // Act
    const added = await models(
      'add',
      id,
      '--backend',
      'reference',
      '--entities',
      '*',
      '--rpm',
      '60',
      '--tpm',
      '10000',
      '--concurrency',
      '4',
    )
    const listed = await models('list')
    const zero = await models('add', bad, '--backend', 'reference', '--entities', '*', '--concurrency', '0')
    const fraction = await models('add', bad, '--backend', 'reference', '--entities', '*', '--rpm', '1.5')

    // Assess
    expect(added.code).toBe(0)
    expect(await getModel(id)).toEqual({
      id,
      backend: { kind: 'reference' },
      entities: ['*'],
      rpm: 60,
      tpm: 10000,
      concurrency: 4,
    })
    expect(listed.stdout).toContain(`${id}  reference built-in engine  entities=*  rpm=60  tpm=10000  concurrency=4`)
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain('--concurrency must be a positive integer')
    expect(fraction.code).toBe(2)
    expect(await getModel(bad)).toBeUndefined()
  })

  it('answers a malformed command line with the message and the usage (status 2), not a stack trace', async () => {
    // Prepare
    const id = `org/args-${randomUUID().slice(0, 8)}`
    const add = (...flags: string[]) => models('add', id, '--backend', 'reference', '--entities', '*', ...flags)

    // Act
    const ambiguous = await add('--created', '-1')
    const negative = await add('--created=-1')
    const unknown = await models('list', '--bogus')
    const unsafe = await add('--rpm', '99999999999999999999')
    const stray = await models('remove', id, '--entities', '*')

    // Assess
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toContain("Option '--created' argument is ambiguous")
    expect(ambiguous.stderr).toContain('Usage: npm run models')
    expect(negative.code).toBe(2)
    expect(negative.stderr).toContain('--created must be a non-negative integer up to 253402300799')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--bogus'")
    expect(unsafe.code).toBe(2)
    expect(unsafe.stderr).toContain('--rpm must be a positive integer up to 1000000')
    expect(stray.code).toBe(2)
    expect(stray.stderr).toContain("'remove' does not take --entities")
    expect(await getModel(id)).toBeUndefined()
  })

  it('refuses an argument the command does not take (status 2, naming it), for every command, writing nothing', async () => {
    // Prepare
    const id = `org/extra-${randomUUID().slice(0, 8)}`
    const kept = `org/kept-${randomUUID().slice(0, 8)}`
    await models('add', kept, '--backend', 'reference', '--entities', '*')

    // Act
    const list = await models('list', 'extra')
    const add = await models('add', id, 'extra', '--backend', 'reference', '--entities', '*')
    const remove = await models('remove', kept, 'extra')
    const imported = await models('import', 'models.json', 'extra')

    // Assess
    for (const refused of [list, add, remove, imported]) {
      expect(refused.code).toBe(2)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toContain('Usage: npm run models')
    }
    expect(list.stderr).toContain("Unexpected argument 'extra': 'list' takes no arguments, only options")
    expect(add.stderr).toContain("Unexpected argument 'extra': 'add' takes <id> only")
    expect(remove.stderr).toContain("Unexpected argument 'extra': 'remove' takes <id> only")
    expect(imported.stderr).toContain("Unexpected argument 'extra': 'import' takes <file.json> only")
    expect(await getModel(id)).toBeUndefined()
    expect(await getModel(kept)).toBeDefined()
  })

  it('refuses a base URL that is not http or https, given as a flag or in an imported file', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `qa/up-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    await writeFile(
      file,
      JSON.stringify({ id, backend: { kind: 'openai-compatible', baseUrl: 'ftp://x' }, entities: ['*'] }),
    )

    // Act
    const flag = await models('add', id, '--base-url', 'ftp://x', '--entities', '*')
    const imported = await models('import', file)
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('--base-url must be an http or https URL')
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain('invalid model at backend.baseUrl: must be an http or https URL')
    expect(await getModel(id)).toBeUndefined()
  })

  it('refuses numbers out of range and flags that would be ignored, from flags and from a file', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `org/range-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    await writeFile(file, JSON.stringify([{ id, backend: { kind: 'reference' }, entities: ['*'], maxModelLen: -5 }]))
    const upstream = (...flags: string[]) => models('add', id, '--base-url', 'http://x/v1', '--entities', '*', ...flags)
    const reference = (...flags: string[]) => models('add', id, '--backend', 'reference', '--entities', '*', ...flags)

    // Act
    const fraction = await reference('--max-model-len', '1.5')
    const zero = await reference('--max-model-len', '0')
    const imported = await models('import', file)
    const cachedAlone = await upstream('--price-cached', '5')
    const perMillion = await upstream('--price-prompt', '15', '--price-completion', '60')
    const noConnect = await upstream('--connect-timeout-ms', '0')
    const referenceUrl = await reference('--base-url', 'http://x/v1')
    const upstreamSettings = await upstream('--settings', '{}')
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(fraction.code).toBe(2)
    expect(fraction.stderr).toContain('--max-model-len must be a positive integer up to 100000000')
    expect(zero.code).toBe(2)
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain('invalid model at 0.maxModelLen')
    expect(cachedAlone.code).toBe(2)
    expect(cachedAlone.stderr).toContain('--price-cached needs --price-prompt and --price-completion')
    expect(perMillion.code).toBe(2)
    expect(perMillion.stderr).toContain('--price-prompt must be a number from 0 to 1 (USD per token)')
    expect(noConnect.code).toBe(2)
    expect(noConnect.stderr).toContain('--connect-timeout-ms must be a positive integer up to 3600000')
    expect(referenceUrl.code).toBe(2)
    expect(referenceUrl.stderr).toContain('--base-url applies to openai-compatible models, not --backend reference')
    expect(upstreamSettings.code).toBe(2)
    expect(upstreamSettings.stderr).toContain('--settings applies to --backend reference only')
    expect(await getModel(id)).toBeUndefined()
  })

  it('lists an entry the checks refuse, written to the table by hand, marked with its first problem', async () => {
    // Prepare
    const id = `qa/raw-${randomUUID().slice(0, 8)}`
    await putRawModel({
      id,
      backend: { kind: 'openai-compatible', baseUrl: 'ftp://x' },
      entities: ['*'],
      maxModelLen: 1.5,
    })

    // Act
    const listed = await models('list')

    // Assess
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(
      `${id}  openai-compatible ftp://x  entities=*  INVALID (backend.baseUrl: must be an http`,
    )
  })

  it('refuses a plaintext credential in an imported file, naming the field and never the value', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `qa/plain-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    const secret = 'sk-live-plaintext-import'
    await writeFile(
      file,
      JSON.stringify({
        id,
        entities: ['*'],
        backend: { kind: 'openai-compatible', baseUrl: 'http://x/v1', apiKeyRef: secret },
      }),
    )

    // Act
    const imported = await models('import', file)
    const flag = await models('add', id, '--base-url', 'http://x/v1', '--entities', '*', '--api-key-ref', secret)
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain(
      `${file}: invalid model at backend.apiKeyRef: must be env:NAME or secret:<id>; the catalog never stores a credential itself\n`,
    )
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('--api-key-ref must be env:NAME or secret:<id>')
    expect(`${imported.stdout}${imported.stderr}${flag.stdout}${flag.stderr}`).not.toContain(secret)
    expect(await getModel(id)).toBeUndefined()
  })

  it('refuses an imported file that is not JSON by line and column, never printing its text', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'loom-models-'))
    const id = `qa/syntax-${randomUUID().slice(0, 8)}`
    const file = join(dir, 'models.json')
    // A key pasted unquoted where the reference belongs: Node's JSON.parse message would quote it.
    await writeFile(
      file,
      `{"id": "${id}", "entities": ["*"], "backend": {"kind": "openai-compatible", "baseUrl": "http://x/v1",\n  "apiKeyRef": sk-live-0123456789abcdef}}`,
    )

    // Act
    const imported = await models('import', file)
    await rm(dir, { recursive: true, force: true })

    // Assess
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain(`${file} is not valid JSON (line 2, column 16)\n`)
    expect(`${imported.stdout}${imported.stderr}`).not.toContain('sk-live')
    expect(await getModel(id)).toBeUndefined()
  })

  it('lists a plaintext credential stored past the checks as INVALID, hiding it from list and list --json', async () => {
    // Prepare
    const id = `qa/raw-key-${randomUUID().slice(0, 8)}`
    const secret = 'sk-live-plaintext-stored'
    await putRawModel({
      id,
      backend: { kind: 'openai-compatible', baseUrl: 'http://x/v1', apiKeyRef: secret },
      entities: ['*'],
    })

    // Act
    const listed = await models('list')
    const json = await models('list', '--json')

    // Assess
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(
      `${id}  openai-compatible http://x/v1  entities=*  INVALID (backend.apiKeyRef: must be env:NAME or secret:<id>`,
    )
    expect(json.code).toBe(0)
    const entry = (JSON.parse(json.stdout) as { id: string; backend: { apiKeyRef?: string } }[]).find(
      (m) => m.id === id,
    )
    expect(entry?.backend.apiKeyRef).toBe('(hidden: not an env: or secret: reference)')
    expect(`${listed.stdout}${listed.stderr}${json.stdout}${json.stderr}`).not.toContain(secret)
  })

  it('sets continuous usage stats off with --no-continuous-usage, on with --continuous-usage, not both', async () => {
    // Prepare
    const off = `org/cu-off-${randomUUID().slice(0, 8)}`
    const on = `org/cu-on-${randomUUID().slice(0, 8)}`
    const upstream = (id: string, ...flags: string[]) =>
      models('add', id, '--base-url', 'http://x/v1', '--entities', '*', ...flags)

    // Act
    const addedOff = await upstream(off, '--no-continuous-usage')
    const addedOn = await upstream(on, '--continuous-usage')
    const both = await upstream(`${off}-both`, '--continuous-usage', '--no-continuous-usage')
    const reference = await models(
      'add',
      `${off}-ref`,
      '--backend',
      'reference',
      '--entities',
      '*',
      '--no-continuous-usage',
    )
    const help = await models('--help')

    // Assess
    expect(addedOff.code).toBe(0)
    expect((await getModel(off))?.backend).toEqual({
      kind: 'openai-compatible',
      baseUrl: 'http://x/v1',
      continuousUsage: false,
    })
    expect(addedOn.code).toBe(0)
    expect((await getModel(on))?.backend).toEqual({
      kind: 'openai-compatible',
      baseUrl: 'http://x/v1',
      continuousUsage: true,
    })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--continuous-usage and --no-continuous-usage exclude each other')
    expect(reference.code).toBe(2)
    expect(reference.stderr).toContain(
      '--no-continuous-usage applies to openai-compatible models, not --backend reference',
    )
    expect(help.stdout).toContain('--no-continuous-usage')
    expect(await getModel(`${off}-both`)).toBeUndefined()
    expect(await getModel(`${off}-ref`)).toBeUndefined()
  })

  it('runs as a script: adds a model to the table it is pointed at and exits with status 0', async () => {
    // Prepare
    const id = `org/script-${randomUUID().slice(0, 8)}`

    // Act
    const added = await spawnCli('scripts/models.ts', 'add', id, '--backend', 'reference', '--entities', '*')

    // Assess
    expect(added.code).toBe(0)
    expect(added.stdout).toContain(`Added ${id}  reference built-in engine  entities=*`)
    expect(await getModel(id)).toEqual({ id, backend: { kind: 'reference' }, entities: ['*'] })
  }, 60_000)

  it("refuses a reference model's invalid engine settings from a flag or a file, and lists a stored one INVALID", async () => {
    // Prepare
    const id = `qa/settings-${randomUUID().slice(0, 8)}`
    const raw = `qa/raw-settings-${randomUUID().slice(0, 8)}`
    const { file, cleanup } = await catalogFile({
      id,
      backend: { kind: 'reference', settings: { maxN: 'many', prefixCacheBlocks: -5 } },
      entities: ['*'],
    })
    await putRawModel({ id: raw, backend: { kind: 'reference', settings: { maxConcurrency: -1 } }, entities: ['*'] })

    // Act
    const flag = await models(
      'add',
      id,
      '--backend',
      'reference',
      '--entities',
      'local',
      '--settings',
      '{"maxConcurrency":-1}',
    )
    const notObject = await models('add', id, '--backend', 'reference', '--entities', 'local', '--settings', '[1]')
    const imported = await models('import', file)
    const listed = await models('list')
    await cleanup()

    // Assess
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('--settings is invalid: settings.maxConcurrency: ')
    expect(notObject.code).toBe(2)
    expect(notObject.stderr).toContain('--settings must be a JSON object')
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain(`${file}: invalid model at backend.settings.maxN: `)
    expect(await getModel(id)).toBeUndefined()
    expect(listed.stdout).toContain(
      `${raw}  reference built-in engine  entities=*  INVALID (backend.settings.maxConcurrency: `,
    )
  })

  it('refuses credentials in a base URL from a flag or a file, and lists a stored one INVALID without them', async () => {
    // Prepare
    const id = `qa/cred-url-${randomUUID().slice(0, 8)}`
    const raw = `qa/raw-cred-url-${randomUUID().slice(0, 8)}`
    const secret = 's3cret-in-url'
    const url = `http://user:${secret}@127.0.0.1:8793/v1`
    const { file, cleanup } = await catalogFile({
      id,
      backend: { kind: 'openai-compatible', baseUrl: url },
      entities: ['*'],
    })
    await putRawModel({ id: raw, backend: { kind: 'openai-compatible', baseUrl: url }, entities: ['*'] })

    // Act
    const flag = await models('add', id, '--base-url', url, '--entities', '*')
    const imported = await models('import', file)
    const listed = await models('list')
    const json = await models('list', '--json')
    await cleanup()

    // Assess
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain(
      '--base-url must not contain a user name or password; pass the credential by reference with --api-key-ref',
    )
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain(
      `${file}: invalid model at backend.baseUrl: must not contain a user name or password; credentials go by reference (--api-key-ref, or backend.apiKeyRef in a catalog file)`,
    )
    expect(await getModel(id)).toBeUndefined()
    expect(listed.stdout).toContain(
      `${raw}  openai-compatible http://(hidden)@127.0.0.1:8793/v1  entities=*  INVALID (backend.baseUrl: must not contain`,
    )
    const entry = (JSON.parse(json.stdout) as { id: string; backend: { baseUrl?: string } }[]).find((m) => m.id === raw)
    expect(entry?.backend.baseUrl).toBe('http://(hidden)@127.0.0.1:8793/v1')
    expect(
      `${flag.stderr}${imported.stderr}${listed.stdout}${listed.stderr}${json.stdout}${json.stderr}`,
    ).not.toContain(secret)
  })

  it('refuses entity names the keys CLI refuses, and a model no entity may use, from flags or a file', async () => {
    // Prepare
    const id = `qa/e1-${randomUUID().slice(0, 8)}`
    const { file, cleanup } = await catalogFile({ id, backend: { kind: 'reference' }, entities: [] })
    const add = (entities: string) => models('add', id, '--backend', 'reference', '--entities', entities)

    // Act
    const empty = await add('')
    const commas = await add(',,')
    const spaced = await add('bad entity')
    const imported = await models('import', file)
    const fine = await add('acme,team_b.2')
    await cleanup()

    // Assess
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('--entities must name at least one entity, or * for every entity')
    expect(commas.code).toBe(2)
    expect(spaced.code).toBe(2)
    expect(spaced.stderr).toContain("--entities: 'bad entity' is not an entity name")
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain(`${file}: invalid model at entities: must name at least one entity`)
    expect(fine.code).toBe(0)
    expect((await getModel(id))?.entities).toEqual(['acme', 'team_b.2'])
  })

  it('refuses an imported file naming one id twice in one line (status 1), writing nothing', async () => {
    // Prepare
    const id = `qa/dup-${randomUUID().slice(0, 8)}`
    const other = `qa/dup-other-${randomUUID().slice(0, 8)}`
    const { file, cleanup } = await catalogFile([
      { id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'first' },
      { id: other, backend: { kind: 'reference' }, entities: ['*'] },
      { id, backend: { kind: 'reference' }, entities: ['*'], ownedBy: 'last' },
    ])

    // Act
    const imported = await models('import', file)
    await cleanup()

    // Assess
    expect(imported.code).toBe(1)
    expect(imported.stderr).toBe(`${file}: model id \`${id}\` appears more than once (at 0 and 2)\n`)
    expect(imported.stdout).toBe('')
    expect(await getModel(id)).toBeUndefined()
    expect(await getModel(other)).toBeUndefined()
  })

  it("lists LOOM_MODELS_FILE's entries marked as such, and refuses to remove one, when the CLI has it set", async () => {
    // Prepare
    const fileOnly = `file/ref-${randomUUID().slice(0, 8)}`
    const both = `file/both-${randomUUID().slice(0, 8)}`
    const { file, cleanup } = await catalogFile([
      { id: fileOnly, backend: { kind: 'reference' }, entities: ['*'] },
      { id: both, backend: { kind: 'reference' }, entities: ['*'] },
    ])
    await models('add', both, '--backend', 'reference', '--entities', 'acme')
    const unset = await models('list')
    config.inference.modelsFile = file

    // Act
    const listed = await models('list')
    const json = await models('list', '--json')
    const removeFileEntry = await models('remove', fileOnly)
    const removeOverride = await models('remove', both)
    await cleanup()

    // Assess
    expect(unset.stdout).not.toContain(fileOnly)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`${fileOnly}  reference built-in engine  entities=*  (LOOM_MODELS_FILE)\n`)
    expect(listed.stdout).toContain(`${both}  reference built-in engine  entities=acme\n`)
    expect(listed.stdout).toContain(
      `${both}  reference built-in engine  entities=*  (LOOM_MODELS_FILE, overridden by the table entry)\n`,
    )
    const entries = JSON.parse(json.stdout) as { id: string; source?: string; overridden?: boolean }[]
    expect(entries.find((m) => m.id === fileOnly)).toMatchObject({ source: 'LOOM_MODELS_FILE' })
    expect(entries.filter((m) => m.id === both).map((m) => [m.source, m.overridden])).toEqual(
      expect.arrayContaining([
        [undefined, undefined],
        ['LOOM_MODELS_FILE', true],
      ]),
    )
    expect(removeFileEntry.code).toBe(1)
    expect(removeFileEntry.stderr).toBe(`Model ${fileOnly} comes from LOOM_MODELS_FILE (${file}); remove it there\n`)
    expect(removeOverride.code).toBe(0)
    expect(removeOverride.stdout).toBe(`Removed ${both} (LOOM_MODELS_FILE's entry ${both} now applies)\n`)
  })

  it('shows the upstream model, the cached-token price and continuous usage off in the plain list', async () => {
    // Prepare
    const id = `qa/plain-list-${randomUUID().slice(0, 8)}`
    await models(
      'add',
      id,
      '--base-url',
      'http://x/v1',
      '--entities',
      '*',
      '--upstream-model',
      'llama',
      '--no-continuous-usage',
      '--price-prompt',
      '0.000002',
      '--price-completion',
      '0.000004',
      '--price-cached',
      '0.000001',
    )

    // Act
    const listed = await models('list')

    // Assess
    expect(listed.stdout).toContain(
      `${id}  openai-compatible http://x/v1  upstreamModel=llama  continuousUsage=false  entities=*  prices=0.000002/0.000004 cached=0.000001\n`,
    )
  })
})
