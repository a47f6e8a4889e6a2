import { classifyKeyIdArgument, createApiKey, setActiveKeyLimits } from '#shared/auth/key-admin'
import { type LimitChange, listApiKeys, revokeApiKey } from '#shared/db/api-key-repository'
import { addMembership } from '#shared/db/membership-repository'
import { type ApiKeyRecord, NameSchema } from '#shared/schemas/api-key'
import { LIMIT_MAX, LIMIT_NAMES, type RateLimits } from '#shared/schemas/rate-limit'
import {
  type Cli,
  type CliOutput,
  type CliValues,
  commandError,
  intFlag,
  PROCESS_OUTPUT,
  runCli,
  usageError,
} from './cli.js'

const USAGE = `Usage: npm run keys -- <command> [options]

  create --user <id> --entity <name> [--name <label>] [limits]   create a key (the plaintext is printed once)
  list [--user <id>]                                    list keys (ids, owners, state, limits; never plaintexts)
  revoke <key-id>                                       revoke a key (effective within the auth cache TTL)
  set-limits <key-id> [limits]                          change a key's limits (effective within the auth cache TTL)
  add-member --user <id> --entity <name>                add a user to an entity

Limits (per key; unset means unlimited; 'none' removes one in set-limits):
  --rpm <n>            requests per minute (at most ${LIMIT_MAX.rpm}), every authenticated route
  --tpm <n>            tokens (prompt + completion) per minute (at most ${LIMIT_MAX.tpm}), chat completions
  --concurrency <n>    requests in flight at once (at most ${LIMIT_MAX.concurrency}), every authenticated route

A command refuses the options and arguments it does not take ([ ] only mark what is optional).

Targets DYNAMODB_ENDPOINT / LOOM_TABLE_NAME when set (AWS when only LOOM_TABLE_NAME is set), else the local stack's
embedded DynamoDB under LOOM_DATA_DIR (default .loom-data), running or not.`

const OPTIONS = {
  user: { type: 'string' },
  entity: { type: 'string' },
  name: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  help: { type: 'boolean' },
} as const

type Values = CliValues<typeof OPTIONS>

function name(value: string | undefined, flag: string): string {
  if (value === undefined) usageError(`--${flag} is required`)
  if (!NameSchema.safeParse(value).success) usageError(`--${flag} must be letters, digits, '_', '.', '-' (max 128)`)
  return value
}

function limit(flag: (typeof LIMIT_NAMES)[number], raw: string, allowNone: boolean): number | null {
  if (allowNone && raw === 'none') return null
  return intFlag(flag, raw, 1, LIMIT_MAX[flag], allowNone ? "'none'" : undefined)
}

function limitChange(values: Values, allowNone: boolean): LimitChange {
  const change: LimitChange = {}
  for (const flag of LIMIT_NAMES) {
    const raw = values[flag]
    if (raw !== undefined) change[flag] = limit(flag, raw, allowNone)
  }
  return change
}

// A plaintext key pasted where its id belongs must not be printed again (terminals, CI logs): only an id is echoed.
function keyIdArgument(raw: string | undefined, command: string): string {
  const keyId = raw ?? usageError(`${command} needs a key id (see \`list\`)`)
  const kind = classifyKeyIdArgument(keyId)
  if (kind === 'api-key') commandError('That looks like an API key, not a key id; `keys list` shows the ids')
  if (kind === 'other') commandError('That is not a key id; `keys list` shows the ids')
  return keyId
}

function noSuchKey(keyId: string): never {
  commandError(`No key with id ${keyId}; \`keys list\` shows the ids`)
}

function describeLimits(record: ApiKeyRecord): string {
  const set = LIMIT_NAMES.filter((n) => record[n] !== undefined).map((n) => `${n}=${record[n]}`)
  return set.length === 0 ? 'unlimited' : set.join(' ')
}

/** `npm run keys -- <argv>`: administers API keys and memberships; returns the exit status (scripts/keys.ts). */
export function keysCli(argv: string[], output: CliOutput = PROCESS_OUTPUT): Promise<number> {
  const cli = {
    name: 'npm run keys',
    usage: USAGE,
    options: OPTIONS,
    commands: {
      create: {
        args: [],
        flags: ['user', 'entity', 'name', ...LIMIT_NAMES],
        run: async (_rest, values) => {
          const userId = name(values.user, 'user')
          const entity = name(values.entity, 'entity')
          const limits = limitChange(values, false) as RateLimits
          const { key, record } = await createApiKey({
            userId,
            entity,
            limits,
            ...(values.name ? { name: values.name } : {}),
          })
          output.out(
            `Created key ${record.keyId} for user '${userId}' in entity '${entity}' (${describeLimits(record)}).\n`,
          )
          output.out(`API key (shown once, store it now): ${key}\n`)
        },
      },
      list: {
        args: [],
        flags: ['user'],
        run: async (_rest, values) => {
          const keys = await listApiKeys(values.user)
          for (const k of keys) {
            const state = k.revokedAt === undefined ? 'active' : `revoked ${k.revokedAt}`
            output.out(
              `${k.keyId}  user=${k.userId}  entity=${k.entity}  created=${k.createdAt}  ${state}  ${describeLimits(k)}\n`,
            )
          }
          if (keys.length === 0) output.out('No keys.\n')
        },
      },
      revoke: {
        args: ['<key-id>'],
        flags: [],
        run: async (rest) => {
          const keyId = keyIdArgument(rest[0], 'revoke')
          if (!(await revokeApiKey(keyId, new Date().toISOString()))) noSuchKey(keyId)
          output.out(`Revoked ${keyId}.\n`)
        },
      },
      'set-limits': {
        args: ['<key-id>'],
        flags: LIMIT_NAMES,
        run: async (rest, values) => {
          const keyId = keyIdArgument(rest[0], 'set-limits')
          const change = limitChange(values, true)
          if (Object.keys(change).length === 0) {
            usageError('set-limits needs at least one of --rpm, --tpm, --concurrency')
          }
          const outcome = await setActiveKeyLimits(keyId, change)
          if (outcome.kind === 'unknown') noSuchKey(keyId)
          if (outcome.kind === 'revoked') {
            commandError(`Key ${keyId} is revoked (${outcome.revokedAt}); its limits cannot change`)
          }
          output.out(`Limits of ${keyId}: ${describeLimits(outcome.record)}.\n`)
        },
      },
      'add-member': {
        args: [],
        flags: ['user', 'entity'],
        run: async (_rest, values) => {
          const userId = name(values.user, 'user')
          const entity = name(values.entity, 'entity')
          await addMembership({ userId, entity, role: 'member', addedAt: new Date().toISOString() })
          output.out(`User '${userId}' is a member of '${entity}'.\n`)
        },
      },
    },
  } satisfies Cli<typeof OPTIONS>
  return runCli(cli, argv, output)
}
