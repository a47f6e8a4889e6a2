import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'

// `npm run test:dynamodb-local`: the same suite on AWS's DynamoDB Local instead of a dynalite per file.
export default mergeConfig(
  base,
  defineConfig({ test: { globalSetup: ['test/support/dynamodb-local-global-setup.ts'] } }),
)
