import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', AWS_REGION: 'us-east-1' },
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
