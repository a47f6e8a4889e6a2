import { config } from '#shared/config'
import { resetFileState } from './setup-common.js'

resetFileState()

// The unit project's files need no table. Should one reach DynamoDB all the same, its call is refused at once (nothing
// listens on the discard port) instead of going to AWS; such a file belongs in the db project (vitest.config.ts).
config.dynamoEndpoint = 'http://127.0.0.1:9'
config.tableName = 'loom-unit-tests-have-no-table'
