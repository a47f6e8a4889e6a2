import { zValidator } from '@hono/zod-validator'
import type { Context, MiddlewareHandler } from 'hono'
import * as z from 'zod/mini'
import { assertProjectAccess } from '#shared/auth/authenticate'
import { RequestValidationError } from '#shared/errors/http-error'
import { toValidationIssues } from '#shared/errors/validation-issues'
import type { AppEnv } from '#shared/http/app-env'
import { readJsonBody } from '#shared/http/read-json'

type Schema = z.core.$ZodType
type Target = 'json' | 'query' | 'param'

// Every request naming a `project_id` is checked against the caller's entities here, so no endpoint can forget it.
function checkProject(c: Context<AppEnv>, data: unknown): void {
  const projectId = (data as { project_id?: unknown } | null)?.project_id
  if (typeof projectId === 'string' && c.get('auth') !== undefined) assertProjectAccess(c.get('auth'), projectId)
}

function fail(issues: readonly z.core.$ZodIssue[], target: Target): never {
  throw new RequestValidationError(
    toValidationIssues(issues, [target === 'json' ? 'body' : target === 'param' ? 'path' : 'query']),
  )
}

type Validated<T extends Target, S extends Schema> = {
  in: { [K in T]: z.input<S> }
  out: { [K in T]: z.output<S> }
}

// A query parameter given more than once reads as its last value, as FastAPI reads a scalar query parameter (Starlette's
// `QueryParams` keeps the last): Loom's query schemas are all scalars. (Hono's validator would hand the schema an
// array, reported as a missing field.) `/v1/usage` refuses repeats before this runs.
function lastValues(c: Context): Record<string, string> {
  const values: Record<string, string> = {}
  for (const [key, all] of Object.entries(c.req.queries())) values[key] = all[all.length - 1] as string
  return values
}

/**
 * Validates one part of the request against a zod schema; a failure throws the family's validation error (rendered by
 * its `onError`), and a `project_id` in the data must belong to one of the caller's entities (403 otherwise).
 *
 * @example app.post('/obj/read', validate('json', ObjReadReqSchema), (c) => c.json(read(c.req.valid('json'))))
 */
export function validate<T extends Target, S extends Schema>(
  target: T,
  schema: S,
): MiddlewareHandler<AppEnv, string, Validated<T, S>> {
  if (target === 'query') {
    return async function validateQuery(c, next) {
      const parsed = z.safeParse(schema, lastValues(c), { reportInput: true })
      if (!parsed.success) fail(parsed.error.issues, target)
      checkProject(c, parsed.data)
      c.req.addValidatedData('query', parsed.data as object)
      await next()
    }
  }
  if (target !== 'json') {
    const inner = zValidator(target, schema, (result, c) => {
      if (!result.success) fail(result.error.issues, target)
      checkProject(c as Context<AppEnv>, result.data)
    })
    return inner as unknown as MiddlewareHandler<AppEnv, string, Validated<T, S>>
  }
  return async function validateJson(c, next) {
    const body = await readJsonBody(c)
    const parsed = z.safeParse(schema, body, { reportInput: true })
    if (!parsed.success) fail(parsed.error.issues, target)
    checkProject(c, parsed.data)
    c.req.addValidatedData('json', parsed.data as object)
    await next()
  }
}
