import type { LambdaEvent } from 'hono/aws-lambda'
import { beforeAll, describe, expect, it } from 'vitest'
import { newCaller } from '../../support/auth.js'
import { authorizerFor } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { publish } from '../../support/objects.js'
import { newQueue } from '../../support/queues.js'
import type { ProjectCaller } from '../../support/tracing.js'

type Handler = (
  event: LambdaEvent,
  context: ReturnType<typeof lambdaContext>,
) => Promise<{ statusCode: number; body: string }>

let caller: ProjectCaller
let digest: string
let queueId: string

beforeAll(async () => {
  const c = await newCaller()
  caller = { ...c, project: `${c.entity}/lambda` }
  digest = await publish(caller, 'obj', { v: 0 })
  queueId = await newQueue(caller)
})

// Each function once through its Lambda entry, behind the REST authorizer: [function, method, path, body|query, status, check].
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions.
const CASES: [string, string, () => string, () => unknown, number, (body: any) => void][] = [
  [
    'create-obj',
    'POST',
    () => '/obj/create',
    () => ({ obj: { project_id: caller.project, object_id: 'l', val: { v: 0 } } }),
    200,
    (b) => expect(b.digest).toBe('UAVY48kKl3eXtcWIilU664ewzrBtYYiiwTbRUQHenPg'),
  ],
  [
    'read-obj',
    'POST',
    () => '/obj/read',
    () => ({ project_id: caller.project, object_id: 'obj', digest: 'latest' }),
    200,
    (b) => expect(b.obj.digest).toBe(digest),
  ],
  [
    'query-objs',
    'POST',
    () => '/objs/query',
    () => ({ project_id: caller.project, filter: { object_ids: ['obj'] } }),
    200,
    (b) => expect(b.objs).toHaveLength(1),
  ],
  [
    'delete-obj',
    'POST',
    () => '/obj/delete',
    () => ({ project_id: caller.project, object_id: 'missing' }),
    404,
    (b) => expect(b.reason).toContain('not found'),
  ],
  [
    'add-obj-tags',
    'PUT',
    () => `/objs/obj/versions/${digest}/tags`,
    () => ({ project_id: caller.project, tags: ['t'] }),
    200,
    (b) => expect(b).toEqual({}),
  ],
  [
    'remove-obj-tags',
    'POST',
    () => `/objs/obj/versions/${digest}/tags/remove`,
    () => ({ project_id: caller.project, tags: ['t'] }),
    200,
    (b) => expect(b).toEqual({}),
  ],
  [
    'set-obj-aliases',
    'PUT',
    () => '/objs/obj/aliases',
    () => ({ project_id: caller.project, digest, aliases: ['a'] }),
    200,
    (b) => expect(b).toEqual({}),
  ],
  [
    'remove-obj-aliases',
    'POST',
    () => '/objs/obj/aliases/remove',
    () => ({ project_id: caller.project, aliases: ['a'] }),
    200,
    (b) => expect(b).toEqual({}),
  ],
  [
    'list-tags',
    'GET',
    () => '/tags',
    () => ({ project_id: caller.project }),
    200,
    (b) => expect(b).toEqual({ tags: [] }),
  ],
  [
    'list-aliases',
    'GET',
    () => '/aliases',
    () => ({ project_id: caller.project }),
    200,
    (b) => expect(b).toEqual({ aliases: ['latest'] }),
  ],
  [
    'create-table',
    'POST',
    () => '/table/create',
    () => ({ table: { project_id: caller.project, rows: [{ x: 1 }, { x: 2 }] } }),
    200,
    (b) => expect(b.digest).toBe('ed8bd1f8cb829eeb6b3fef95a7cd8401f7e5af825c4c9aa144a1ceb9f32c3654'),
  ],
  [
    'query-table',
    'POST',
    () => '/table/query',
    () => ({ project_id: caller.project, digest: 'none' }),
    200,
    (b) => expect(b).toEqual({ rows: [] }),
  ],
  [
    'update-table',
    'POST',
    () => '/table/update',
    () => ({ project_id: caller.project, base_digest: 'none', updates: [] }),
    404,
    (b) => expect(b.reason).toBe(`Table ${caller.project}:none not found`),
  ],
  [
    'create-table-from-digests',
    'POST',
    () => '/table/create_from_digests',
    () => ({ project_id: caller.project, row_digests: [] }),
    200,
    (b) => expect(b.digest).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'),
  ],
  [
    'query-table-stats',
    'POST',
    () => '/table/query_stats',
    () => ({ project_id: caller.project, digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }),
    200,
    (b) => expect(b).toEqual({ count: 0 }),
  ],
  [
    'query-table-stats-batch',
    'POST',
    () => '/table/query_stats_batch',
    () => ({ project_id: caller.project, digests: ['none'] }),
    200,
    (b) => expect(b).toEqual({ tables: [] }),
  ],
  [
    'read-file-content',
    'POST',
    () => '/file/content',
    () => ({ project_id: caller.project, digest: 'none' }),
    404,
    (b) => expect(b.reason).toBe('File with digest none not found'),
  ],
  [
    'create-feedback',
    'POST',
    () => '/feedback/create',
    () => ({ project_id: caller.project, weave_ref: 'r', feedback_type: 't', payload: {} }),
    200,
    (b) => expect(b.wb_user_id).toBe(caller.userId),
  ],
  [
    'create-feedback-batch',
    'POST',
    () => '/feedback/batch/create',
    () => ({ batch: [] }),
    200,
    (b) => expect(b).toEqual({ res: [] }),
  ],
  [
    'query-feedback',
    'POST',
    () => '/feedback/query',
    () => ({ project_id: caller.project, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'x' }] } } }),
    200,
    (b) => expect(b).toEqual({ result: [], total_count: 0 }),
  ],
  [
    'purge-feedback',
    'POST',
    () => '/feedback/purge',
    () => ({ project_id: caller.project, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: 'x' }] } } }),
    200,
    (b) => expect(b).toEqual({}),
  ],
  [
    'replace-feedback',
    'POST',
    () => '/feedback/replace',
    () => ({ project_id: caller.project, feedback_id: 'x', weave_ref: 'r', feedback_type: 't', payload: {} }),
    200,
    (b) => expect(b.payload).toEqual({}),
  ],
  [
    'get-feedback-stats',
    'POST',
    () => '/feedback/stats',
    () => ({
      project_id: caller.project,
      start: '2024-01-01T00:00:00Z',
      end: '2024-01-01T01:00:00Z',
      metrics: [{ json_path: 'x' }],
    }),
    200,
    (b) => expect(b.buckets).toHaveLength(12),
  ],
  [
    'get-feedback-payload-schema',
    'POST',
    () => '/feedback/payload_schema',
    () => ({ project_id: caller.project, start: '2024-01-01T00:00:00Z', end: '2024-01-01T01:00:00Z' }),
    200,
    (b) => expect(b).toEqual({ paths: [] }),
  ],
  [
    'create-annotation-queue',
    'POST',
    () => '/annotation_queues',
    () => ({ project_id: caller.project, name: 'q', scorer_refs: [] }),
    200,
    (b) => expect(typeof b.id).toBe('string'),
  ],
  [
    'read-annotation-queue',
    'GET',
    () => `/annotation_queues/${queueId}`,
    () => ({ project_id: caller.project }),
    200,
    (b) => expect(b.queue.id).toBe(queueId),
  ],
  [
    'update-annotation-queue',
    'PUT',
    () => `/annotation_queues/${queueId}`,
    () => ({ project_id: caller.project, name: 'renamed' }),
    200,
    (b) => expect(b.queue.name).toBe('renamed'),
  ],
  [
    'add-annotation-queue-items',
    'POST',
    () => `/annotation_queues/${queueId}/items`,
    () => ({ project_id: caller.project, call_ids: ['none'], display_fields: [] }),
    200,
    (b) => expect(b).toEqual({ added_count: 0, duplicates: 0 }),
  ],
  [
    'query-annotation-queue-items',
    'POST',
    () => `/annotation_queues/${queueId}/items/query`,
    () => ({ project_id: caller.project }),
    200,
    (b) => expect(b).toEqual({ items: [] }),
  ],
  [
    'get-annotation-queues-stats',
    'POST',
    () => '/annotation_queues/stats',
    () => ({ project_id: caller.project, queue_ids: [queueId] }),
    200,
    (b) => expect(b.stats[0].total_items).toBe(0),
  ],
  [
    'update-annotation-queue-item-progress',
    'POST',
    () => `/annotation_queues/${queueId}/items/none/progress`,
    () => ({ project_id: caller.project, annotation_state: 'completed' }),
    400,
    (b) => expect(b.reason).toContain('not found in queue'),
  ],
  [
    'delete-annotation-queue',
    'DELETE',
    () => `/annotation_queues/${queueId}`,
    () => ({ project_id: caller.project }),
    200,
    (b) => expect(typeof b.queue.deleted_at).toBe('string'),
  ],
]

describe('tracing object, feedback and queue functions as Lambdas', () => {
  it.each(CASES)(
    '%s answers through its handler behind the REST authorizer',
    async (name, method, path, input, status, check) => {
      // Prepare
      const { handler } = (await import(`../../../functions/tracing/${name}/handler.ts`)) as { handler: Handler }
      const query = method === 'GET' || method === 'DELETE' ? (input() as Record<string, string>) : undefined
      const event = restEvent({
        method,
        path: path(),
        headers: { 'content-type': 'application/json', ...caller.basic },
        ...(query === undefined ? { body: JSON.stringify(input()) } : { query }),
        authorizer: authorizerFor(caller),
      })

      // Act: streamed (obj/read, objs/query, feedback/query) or buffered, as the function's manifest entry declares.
      const result = await invokeLambda(handler, event)

      // Assess
      expect(result.statusCode).toBe(status)
      check(JSON.parse(result.body))
    },
  )

  it('query-annotation-queues answers JSON Lines through its handler', async () => {
    const { handler } = (await import('#functions/tracing/query-annotation-queues/handler')) as unknown as {
      handler: Handler
    }
    const event = restEvent({
      method: 'POST',
      path: '/annotation_queues/query',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: caller.project, name: 'q' }),
      authorizer: authorizerFor(caller),
    })
    const result = await handler(event, lambdaContext())
    expect(result.statusCode).toBe(200)
    expect(
      result.body
        .split('\n')
        .filter((l) => l !== '')
        .every((l) => JSON.parse(l).project_id === caller.project),
    ).toBe(true)
  })

  it('create-file stores a multipart upload through its handler', async () => {
    const { handler } = (await import('#functions/tracing/create-file/handler')) as unknown as { handler: Handler }
    const boundary = 'loomboundary'
    const body = [
      `--${boundary}\r\nContent-Disposition: form-data; name="project_id"\r\n\r\n${caller.project}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n`,
      `--${boundary}--\r\n`,
    ].join('')
    const event = restEvent({
      method: 'POST',
      path: '/file/create',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...caller.basic },
      body,
      authorizer: authorizerFor(caller),
    })
    const result = await handler(event, lambdaContext())
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ digest: 'LPJNulXwow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ' })
  })
})
