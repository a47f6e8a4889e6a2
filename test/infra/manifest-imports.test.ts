import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'

describe('functions/manifest.ts (read by the CDK app)', () => {
  it('imports only route declarations, zod schemas and zod: no handler, config, data, HTTP code or SDK', async () => {
    // Act
    const result = await build({
      entryPoints: ['functions/manifest.ts'],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    })
    const inputs = Object.keys(result.metafile.inputs)

    // Assess
    expect(inputs.filter((i) => /^functions\/[^/]+\/[^/]+\/route\.ts$/.test(i))).toHaveLength(64)
    expect(
      inputs.filter(
        (i) =>
          i.endsWith('/handler.ts') ||
          /^shared\/(config\.ts|db\/|http\/|auth\/|errors\/|inference\/)/.test(i) ||
          (i.includes('node_modules/') && !i.includes('node_modules/zod/')),
      ),
    ).toEqual([])
  })
})
