import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { GLOBAL_INDEXES, PRIMARY_KEY } from '#shared/db/table'

/**
 * IAM as DynamoDB applies it to one function: the identity-policy statements of each function's execution role, read
 * from a synthesized cloud assembly, and an evaluator of those statements for the authorizations a DynamoDB request
 * needs (action, table or index ARN, and the `dynamodb:LeadingKeys` the request touches). Used by the policy-enforcing
 * DynamoDB proxy (`test/infra/iam-policy-proxy.test.ts`), so what a function's code issues and what its role allows
 * cannot drift apart.
 *
 * The evaluator implements the subset of IAM the stacks use and refuses (throws on) everything else, so a policy it
 * cannot judge fails the test loudly instead of being judged wrong: Allow/Deny, Action/NotAction and
 * Resource/NotResource with `*` and `?` wildcards, and conditions on `dynamodb:LeadingKeys` with the set operators
 * `ForAllValues:` / `ForAnyValue:` over `StringEquals`, `StringLike`, `StringNotEquals`, `StringNotLike`.
 */

/** One statement of an identity policy, with intrinsic functions resolved to strings. */
export type PolicyStatement = {
  Effect: 'Allow' | 'Deny'
  Action?: string | string[]
  NotAction?: string | string[]
  Resource?: string | string[]
  NotResource?: string | string[]
  Condition?: Record<string, Record<string, string | string[]>>
}

/** One authorization a DynamoDB request needs: the action, the table or index ARN, the partition keys it touches. */
export type DynamoAccess = { action: string; resource: string; leadingKeys: string[] }

/** The verdict on one access; `reason` says which statement decided, or why nothing allowed it. */
export type Verdict = { allowed: boolean; reason: string }

// Pseudo parameters of an environment-agnostic stack, resolved to fixed values (the test's table ARN uses the same).
const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
}

/** The ARN of a table in the account and region the pseudo parameters resolve to. */
export function tableArn(tableName: string): string {
  return `arn:aws:dynamodb:${PSEUDO['AWS::Region']}:${PSEUDO['AWS::AccountId']}:table/${tableName}`
}

/** Resolves `Fn::Join` of literals and pseudo parameters; anything else becomes a marker that matches no ARN. */
function resolve(value: unknown): unknown {
  if (typeof value === 'string' || typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(resolve)
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (keys.length === 1 && keys[0] === 'Ref' && typeof record.Ref === 'string' && record.Ref in PSEUDO) {
    return PSEUDO[record.Ref]
  }
  if (keys.length === 1 && keys[0] === 'Fn::Join') {
    const [separator, parts] = record['Fn::Join'] as [string, unknown[]]
    const resolved = parts.map(resolve)
    if (resolved.every((p) => typeof p === 'string')) return resolved.join(separator)
  }
  if (keys.length === 1 && keys[0]?.startsWith('Fn::')) return `<unresolved ${JSON.stringify(value)}>`
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolve(v)]))
}

type CfnResource = { Type: string; Properties?: Record<string, unknown> }

const refersTo = (roles: unknown, logicalId: string) =>
  Array.isArray(roles) && roles.some((r) => (r as { Ref?: string }).Ref === logicalId)

/**
 * Every Loom function's execution-role statements (inline role policies, attached `AWS::IAM::Policy` and customer
 * managed policies), keyed by the function's `LOOM_FUNCTION_ID`, read from every template of a synthesized assembly
 * (root and nested stacks alike, so splitting stacks changes nothing). A role with AWS managed policies attached is
 * refused: their content is not in the assembly.
 */
export function functionPolicies(assemblyDirectory: string): Map<string, PolicyStatement[]> {
  const policies = new Map<string, PolicyStatement[]>()
  for (const file of readdirSync(assemblyDirectory).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(join(assemblyDirectory, file), 'utf8')) as {
      Resources?: Record<string, CfnResource>
    }
    const resources = template.Resources ?? {}
    for (const fn of Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function')) {
      const props = fn.Properties ?? {}
      const id = (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.LOOM_FUNCTION_ID
      if (typeof id !== 'string') continue
      const roleId = (props.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0]
      const role = roleId === undefined ? undefined : resources[roleId]
      if (roleId === undefined || role?.Type !== 'AWS::IAM::Role') {
        throw new Error(`${id}: its role is not a role of the same template (${JSON.stringify(props.Role)})`)
      }
      if (((role.Properties?.ManagedPolicyArns as unknown[] | undefined) ?? []).length > 0) {
        throw new Error(`${id}: managed policy ARNs on the role cannot be evaluated here`)
      }
      const documents = [
        ...((role.Properties?.Policies as { PolicyDocument: unknown }[] | undefined) ?? []).map(
          (p) => p.PolicyDocument,
        ),
        ...Object.values(resources)
          .filter(
            (r) =>
              (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') &&
              refersTo(r.Properties?.Roles, roleId),
          )
          .map((r) => r.Properties?.PolicyDocument),
      ]
      const statements = documents.flatMap(
        (d) => (resolve(d) as { Statement: PolicyStatement | PolicyStatement[] }).Statement,
      )
      if (policies.has(id)) throw new Error(`${id}: two functions carry this LOOM_FUNCTION_ID`)
      policies.set(id, [statements].flat())
    }
  }
  return policies
}

/** The statements that may concern DynamoDB (any whose actions could name a `dynamodb:` action). */
export function dynamoStatements(statements: PolicyStatement[]): PolicyStatement[] {
  return statements.filter(
    (s) =>
      s.NotAction !== undefined ||
      [s.Action ?? []].flat().some((a) => a === '*' || a.toLowerCase().startsWith('dynamodb:')),
  )
}

// IAM's string wildcards: `*` any run of characters, `?` exactly one; everything else literal.
function wildcard(pattern: string, value: string, caseInsensitive = false): boolean {
  if (pattern.includes('${')) throw new Error(`policy variables are not supported: ${pattern}`)
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('')
  return new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's').test(value)
}

const list = (value: string | string[] | undefined) => (value === undefined ? undefined : [value].flat())

function matchesAction(statement: PolicyStatement, action: string): boolean {
  const actions = list(statement.Action)
  const notActions = list(statement.NotAction)
  if (actions !== undefined) return actions.some((a) => wildcard(a, action, true))
  if (notActions !== undefined) return !notActions.some((a) => wildcard(a, action, true))
  throw new Error('a statement without Action or NotAction')
}

function matchesResource(statement: PolicyStatement, resource: string): boolean {
  const resources = list(statement.Resource)
  const notResources = list(statement.NotResource)
  if (resources !== undefined) return resources.some((r) => wildcard(r, resource))
  if (notResources !== undefined) return !notResources.some((r) => wildcard(r, resource))
  throw new Error('a statement without Resource or NotResource')
}

const STRING_OPERATORS: Record<string, { like: boolean; negated: boolean }> = {
  StringEquals: { like: false, negated: false },
  StringLike: { like: true, negated: false },
  StringNotEquals: { like: false, negated: true },
  StringNotLike: { like: true, negated: true },
}

function matchesConditions(statement: PolicyStatement, access: DynamoAccess): boolean {
  for (const [operator, entries] of Object.entries(statement.Condition ?? {})) {
    const [qualifier, base] = operator.includes(':') ? operator.split(':') : [undefined, operator]
    const op = STRING_OPERATORS[base ?? '']
    if (op === undefined || (qualifier !== 'ForAllValues' && qualifier !== 'ForAnyValue')) {
      throw new Error(`condition operator ${operator} is not supported here (use ForAllValues:/ForAnyValue:)`)
    }
    for (const [key, patterns] of Object.entries(entries)) {
      if (key.toLowerCase() !== 'dynamodb:leadingkeys') throw new Error(`condition key ${key} is not supported here`)
      const one = (value: string) => {
        const hit = [patterns].flat().some((p) => (op.like ? wildcard(p, value) : p === value))
        return op.negated ? !hit : hit
      }
      // ForAllValues holds for an empty set (a request without a partition key); ForAnyValue does not.
      const holds = qualifier === 'ForAllValues' ? access.leadingKeys.every(one) : access.leadingKeys.some(one)
      if (!holds) return false
    }
  }
  return true
}

/** IAM's decision for one access under identity-policy statements: an explicit Deny wins, then any Allow. */
export function evaluate(statements: PolicyStatement[], access: DynamoAccess): Verdict {
  const applies = (s: PolicyStatement) =>
    matchesAction(s, access.action) && matchesResource(s, access.resource) && matchesConditions(s, access)
  const deny = statements.find((s) => s.Effect === 'Deny' && applies(s))
  if (deny !== undefined) return { allowed: false, reason: `explicitly denied by ${JSON.stringify(deny)}` }
  const allow = statements.find((s) => s.Effect === 'Allow' && applies(s))
  if (allow !== undefined) return { allowed: true, reason: `allowed by ${JSON.stringify(allow)}` }
  return { allowed: false, reason: 'no identity-based policy allows it' }
}

type AttributeValue = Record<string, unknown>
type Item = Record<string, AttributeValue>

// A key attribute's value as IAM sees it (our keys are strings; numbers and binaries are compared as sent).
function scalar(value: AttributeValue | undefined): string | undefined {
  if (value === undefined) return undefined
  const v = value.S ?? value.N ?? value.B
  return typeof v === 'string' ? v : undefined
}

function partitionKeyOf(indexName: string | undefined): string {
  if (indexName === undefined) return PRIMARY_KEY.partitionKey
  const index = GLOBAL_INDEXES.find((i) => i.indexName === indexName)
  if (index === undefined) throw new Error(`unknown index ${indexName}`)
  return index.partitionKey
}

function keyValue(item: Item | undefined, attribute: string): string[] {
  const value = scalar(item?.[attribute])
  return value === undefined ? [] : [value]
}

// The partition key value a Query names: `<pk> = :v` (either side, names through ExpressionAttributeNames) or the
// legacy `KeyConditions` EQ.
function queryPartitionKey(body: Record<string, unknown>, attribute: string): string {
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>
  const values = (body.ExpressionAttributeValues ?? {}) as Item
  const expression = body.KeyConditionExpression
  if (typeof expression === 'string') {
    const name = (token: string) => (token.startsWith('#') ? names[token] : token)
    for (const match of expression.matchAll(/([#:]?[\w.-]+)\s*=\s*([#:]?[\w.-]+)/g)) {
      const [, left, right] = match as unknown as [string, string, string]
      const [attr, placeholder] = left.startsWith(':') ? [right, left] : [left, right]
      const value = scalar(values[placeholder])
      if (name(attr) === attribute && value !== undefined) return value
    }
  }
  const legacy = (body.KeyConditions as Record<string, { AttributeValueList?: AttributeValue[] }> | undefined)?.[
    attribute
  ]
  const value = scalar(legacy?.AttributeValueList?.[0])
  if (value !== undefined) return value
  throw new Error(`a Query without a partition key condition on ${attribute}: ${JSON.stringify(expression)}`)
}

/**
 * The authorizations one DynamoDB request needs, as IAM evaluates them: one per table (and index) it names, with the
 * partition key values it touches (`Key`, `Item`, the Query's key condition and `ExclusiveStartKey`, every key of a
 * batch). For a Query or Scan on an index the leading key is the index's partition key.
 */
export function accessesOf(operation: string, body: Record<string, unknown>): DynamoAccess[] {
  const action = `dynamodb:${operation}`
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    const requestItems = (body.RequestItems ?? {}) as Record<string, unknown>
    return Object.entries(requestItems).map(([table, requests]) => {
      const items =
        operation === 'BatchGetItem'
          ? ((requests as { Keys?: Item[] }).Keys ?? [])
          : (requests as { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]).map(
              (r) => r.PutRequest?.Item ?? r.DeleteRequest?.Key,
            )
      return {
        action,
        resource: tableArn(table),
        leadingKeys: [...new Set(items.flatMap((item) => keyValue(item, PRIMARY_KEY.partitionKey)))],
      }
    })
  }
  if (operation.startsWith('Transact')) throw new Error(`${operation} is not evaluated here (the data layer uses none)`)
  const table = body.TableName
  if (typeof table !== 'string') throw new Error(`${operation} without a TableName is not evaluated here`)
  const indexName = typeof body.IndexName === 'string' ? body.IndexName : undefined
  const resource = indexName === undefined ? tableArn(table) : `${tableArn(table)}/index/${indexName}`
  const attribute = partitionKeyOf(indexName)
  const keys = new Set<string>()
  for (const item of [body.Key, body.Item, body.ExclusiveStartKey] as (Item | undefined)[]) {
    for (const value of keyValue(item, item === body.Key || item === body.Item ? PRIMARY_KEY.partitionKey : attribute))
      keys.add(value)
  }
  if (operation === 'Query') keys.add(queryPartitionKey(body, attribute))
  return [{ action, resource, leadingKeys: [...keys] }]
}
