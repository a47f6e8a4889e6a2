import type { Context } from 'hono'
import { assertProjectAccess } from '#shared/auth/authenticate'
import { assertFileFits, getFile, putFile } from '#shared/db/file-repository'
import { registerProject } from '#shared/db/project-repository'
import { ConflictError, NotFoundError, RequestValidationError, type ValidationIssue } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { bytesDigest } from '#shared/tracing/digest'

const missing = (field: string): ValidationIssue => ({ type: 'missing', loc: ['body', field], msg: 'Field required' })

/** `file/create`: reads the multipart form (`project_id`, `file`, `expected_digest?`), stores the bytes once. */
export async function createFile(c: Context<AppEnv>): Promise<{ digest: string }> {
  let form: Record<string, unknown>
  try {
    form = await c.req.parseBody()
  } catch {
    throw new RequestValidationError([missing('file')])
  }
  const projectId = form.project_id
  const file = form.file
  const issues: ValidationIssue[] = []
  if (typeof projectId !== 'string') issues.push(missing('project_id'))
  if (!(file instanceof File)) issues.push(missing('file'))
  if (issues.length > 0) throw new RequestValidationError(issues)
  const project = projectId as string
  assertProjectAccess(c.get('auth'), project)
  const upload = file as File
  const bytes = new Uint8Array(await upload.arrayBuffer())
  const digest = bytesDigest(bytes)
  const expected = form.expected_digest
  if (typeof expected === 'string' && expected !== '' && expected !== digest) {
    throw new ConflictError(`Client file digest ${expected} != server digest ${digest}`)
  }
  // Before any write: a file DynamoDB could not store is refused with nothing recorded.
  assertFileFits(project, digest, upload.name, bytes)
  await registerProject(project)
  await putFile(project, digest, upload.name, bytes)
  return { digest }
}

/** `file/content`: the stored bytes; 404 for an unknown digest. */
export async function readFileContent(project: string, digest: string): Promise<Uint8Array> {
  const bytes = await getFile(project, digest)
  if (bytes === undefined) throw new NotFoundError(`File with digest ${digest} not found`)
  return bytes
}
