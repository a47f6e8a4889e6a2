import { parseArgs } from 'node:util'
import { createApiKey } from '#shared/auth/key-admin'
import { listApiKeys, revokeApiKey } from '#shared/db/api-key-repository'
import { addMembership } from '#shared/db/membership-repository'
import { NameSchema } from '#shared/schemas/api-key'
import { runCli, usageError } from './local/cli.js'

const USAGE = `Usage: npm run keys -- <command> [options]

  create --user <id> --entity <name> [--name <label>]   create a key (the plaintext is printed once)
  list [--user <id>]                                    list keys (ids, owners, state; never plaintexts)
  revoke <key-id>                                       revoke a key (effective within the auth cache TTL)
  add-member --user <id> --entity <name>                add a user to an entity

Targets DYNAMODB_ENDPOINT / LOOM_TABLE_NAME when set (AWS when only LOOM_TABLE_NAME is set), else the local stack's
embedded DynamoDB under LOOM_DATA_DIR (default .loom-data), running or not.`

function fail(message: string): never {
  return usageError({ usage: USAGE }, message)
}

function name(value: string | undefined, flag: string): string {
  if (value === undefined) fail(`--${flag} is required`)
  if (!NameSchema.safeParse(value).success) fail(`--${flag} must be letters, digits, '_', '.', '-' (max 128)`)
  return value
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    user: { type: 'string' },
    entity: { type: 'string' },
    name: { type: 'string' },
    help: { type: 'boolean' },
  },
})
await runCli(
  {
    usage: USAGE,
    commands: {
      create: async () => {
        const userId = name(values.user, 'user')
        const entity = name(values.entity, 'entity')
        const { key, record } = await createApiKey({ userId, entity, ...(values.name ? { name: values.name } : {}) })
        process.stdout.write(`Created key ${record.keyId} for user '${userId}' in entity '${entity}'.\n`)
        process.stdout.write(`API key (shown once, store it now): ${key}\n`)
      },
      list: async () => {
        const keys = await listApiKeys(values.user)
        for (const k of keys) {
          const state = k.revokedAt === undefined ? 'active' : `revoked ${k.revokedAt}`
          process.stdout.write(`${k.keyId}  user=${k.userId}  entity=${k.entity}  created=${k.createdAt}  ${state}\n`)
        }
        if (keys.length === 0) process.stdout.write('No keys.\n')
      },
      revoke: async (rest) => {
        const keyId = rest[0] ?? fail('revoke needs a key id (see `list`)')
        if (!(await revokeApiKey(keyId, new Date().toISOString()))) fail(`No key with id ${keyId}`)
        process.stdout.write(`Revoked ${keyId}.\n`)
      },
      'add-member': async () => {
        const userId = name(values.user, 'user')
        const entity = name(values.entity, 'entity')
        await addMembership({ userId, entity, role: 'member', addedAt: new Date().toISOString() })
        process.stdout.write(`User '${userId}' is a member of '${entity}'.\n`)
      },
    },
  },
  positionals,
  values.help,
)
