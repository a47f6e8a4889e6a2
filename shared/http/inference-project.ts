import type { MiddlewareHandler } from 'hono'
import { assertProjectAccess } from '#shared/auth/authenticate'
import { startRecord } from '#shared/db/call-records'
import { oversizedKey } from '#shared/db/item-size'
import { BadRequestError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { requestHeader } from '#shared/http/node-bindings'
import { TRACE_OP_NAME } from '#shared/inference/trace-op'

// The entity has no whitespace; a project name may hold spaces, as W&B's names and the tracing family's may
// (`projectNameProblem` then applies W&B's rules).
const PROJECT_RE = /^([^/\s]+)\/([^/]+)$/

// A completion's call id and trace id are UUIDv7s (trace-completion.ts): 36 characters, like this one.
const CALL_ID = '00000000-0000-7000-8000-000000000000'

/**
 * Whether the call a completion of `projectId` is traced as can be stored: the check the tracing family makes before
 * it writes a call (`oversizedKey` over the call's keys, as `assertCallStartFits` does), so both families refuse a
 * project id from the same byte on, and a completion they accept never loses its trace to a key too long.
 */
export function tracedProjectFits(projectId: string): boolean {
  const start = {
    project_id: projectId,
    id: CALL_ID,
    trace_id: CALL_ID,
    op_name: TRACE_OP_NAME,
    started_at: '',
    size: 0,
  }
  return oversizedKey(startRecord(start)) === undefined
}

// The longest ASCII project id that fits, for the refusal's message (found with the rule itself, only on a refusal).
function longestFitting(): number {
  let [fits, fails] = [1, 4096]
  while (fails - fits > 1) {
    const mid = (fits + fails) >> 1
    if (tracedProjectFits('x'.repeat(mid))) fits = mid
    else fails = mid
  }
  return fits
}

/**
 * The project attribution header a request carries, `Compat-Project` before `OpenAI-Project`, with the header's name;
 * a blank header counts as absent, so an empty `Compat-Project` never hides an `OpenAI-Project` (docs/inference.md §1).
 */
export function projectHeader(
  compat: string | undefined,
  openai: string | undefined,
): { value: string; param: 'Compat-Project' | 'OpenAI-Project' } | undefined {
  const fromCompat = compat?.trim()
  if (fromCompat) return { value: fromCompat, param: 'Compat-Project' }
  const fromOpenai = openai?.trim()
  return fromOpenai ? { value: fromOpenai, param: 'OpenAI-Project' } : undefined
}

/**
 * Inference attributes usage to `Compat-Project` / `OpenAI-Project`, else to the key's entity and project `inference`.
 * A malformed value, or one too long for its completions' traces to be stored, is a 400 whose `param` names the
 * header that carried it; it is refused before any metering, upstream call or trace.
 */
export const inferenceProject: MiddlewareHandler<AppEnv> = function inferenceProject(c, next) {
  const principal = c.get('auth')
  const header = projectHeader(requestHeader(c, 'compat-project'), requestHeader(c, 'openai-project'))
  if (header === undefined) {
    c.set('project', { entity: principal.entity, project: 'inference', id: `${principal.entity}/inference` })
    return next()
  }
  const { value, param } = header
  const match = PROJECT_RE.exec(value)
  if (!match?.[1] || !match[2]) {
    throw new BadRequestError('The project header must be `<entity>/<project>`', { param })
  }
  try {
    assertProjectAccess(principal, value)
  } catch (error) {
    // The project name W&B would refuse (`e/x#y`): a 400 of this header. A foreign entity stays a 403.
    if (error instanceof BadRequestError) throw new BadRequestError(error.message, { param, cause: error })
    throw error
  }
  if (!tracedProjectFits(value)) {
    throw new BadRequestError(
      `The project id is too long to be stored as a key (at most ${longestFitting()} bytes in UTF-8)`,
      { param },
    )
  }
  c.set('project', { entity: match[1], project: match[2], id: `${match[1]}/${match[2]}` })
  return next()
}
