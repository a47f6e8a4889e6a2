import { suiteConfig } from './vitest.config.js'

// `npm run test:dynamodb-local`: the same suite on AWS's DynamoDB Local instead of a dynalite per file, plus the
// files that launch DynamoDB Local themselves (DYNAMODB_LOCAL_FILES).
export default suiteConfig('dynamodb-local')
