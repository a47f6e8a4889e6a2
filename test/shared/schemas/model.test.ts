import { describe, expect, it } from 'vitest'
import { safeParse } from 'zod/mini'
import { CatalogModelSchema, StoredCatalogModelSchema, UpstreamUrlSchema } from '#shared/schemas/model'

// The first problem of an entry, as the CLI and the catalog file report it: `path: message`.
function firstIssue(entry: unknown): string | undefined {
  const parsed = safeParse(CatalogModelSchema, entry)
  const issue = parsed.success ? undefined : parsed.error.issues[0]
  return issue === undefined ? undefined : `${issue.path.map(String).join('.')}: ${issue.message}`
}

const reference = (settings: unknown, entities: unknown = ['*']) => ({
  id: 'q/ref',
  backend: { kind: 'reference', settings },
  entities,
})

describe('CatalogModelSchema', () => {
  it("checks a reference model's engine settings, naming the field", () => {
    // Act
    const negative = firstIssue(reference({ maxConcurrency: -1 }))
    const text = firstIssue(reference({ maxN: 'many', prefixCacheBlocks: -5 }))
    const notObject = firstIssue(reference([1, 2]))
    const valid = safeParse(CatalogModelSchema, reference({ maxConcurrency: 2, chatTemplate: null }))

    // Assess
    expect(negative).toMatch(/^backend\.settings\.maxConcurrency: /)
    expect(text).toMatch(/^backend\.settings\.maxN: /)
    expect(notObject).toMatch(/^backend\.settings: /)
    expect(valid.success).toBe(true)
  })

  it('refuses an upstream base URL with a user name or password, pointing to the reference, never echoing it', () => {
    // Act
    const withBoth = firstIssue({
      id: 'q/up',
      backend: { kind: 'openai-compatible', baseUrl: 'http://user:s3cret@127.0.0.1:8793/v1' },
      entities: ['*'],
    })
    const userOnly = safeParse(UpstreamUrlSchema, 'https://token@api.example.com/v1')
    const plain = safeParse(UpstreamUrlSchema, 'http://127.0.0.1:8793/v1')

    // Assess
    expect(withBoth).toBe(
      'backend.baseUrl: must not contain a user name or password; credentials go by reference (--api-key-ref, or backend.apiKeyRef in a catalog file)',
    )
    expect(withBoth).not.toContain('s3cret')
    expect(userOnly.success).toBe(false)
    expect(plain.success).toBe(true)
  })

  it('takes * or entity names as the keys CLI takes them, and at least one', () => {
    // Act
    const none = firstIssue(reference(undefined, []))
    const empty = firstIssue(reference(undefined, ['']))
    const spaced = firstIssue(reference(undefined, ['acme', 'bad entity']))
    const valid = safeParse(CatalogModelSchema, reference(undefined, ['acme', 'team_b.2-x', '*']))

    // Assess
    expect(none).toBe('entities: must name at least one entity, or * for every entity')
    expect(empty).toMatch(/^entities\.0: must be \* or an entity name/)
    expect(spaced).toMatch(/^entities\.1: must be \* or an entity name/)
    expect(valid.success).toBe(true)
  })
})

describe('StoredCatalogModelSchema', () => {
  it('still reads what the checks refuse, so that one bad entry cannot hide the catalog', () => {
    // Act
    const stored = safeParse(StoredCatalogModelSchema, {
      id: 'q/raw',
      backend: { kind: 'reference', settings: { maxConcurrency: -1 } },
      entities: ['bad entity'],
    })
    const withCredentials = safeParse(StoredCatalogModelSchema, {
      id: 'q/raw-url',
      backend: { kind: 'openai-compatible', baseUrl: 'http://user:pass@x/v1' },
      entities: [],
    })

    // Assess
    expect(stored.success).toBe(true)
    expect(withCredentials.success).toBe(true)
  })
})
