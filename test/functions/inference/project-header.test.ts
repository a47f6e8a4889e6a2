import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as chatApp } from '#functions/inference/create-chat-completion/handler'
import { app as usageApp } from '#functions/inference/get-usage/handler'
import { app as startApp } from '#functions/tracing/start-call/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { clearAuthCache } from '#shared/auth/authenticate'
import { addMembership } from '#shared/db/membership-repository'
import { listUsage } from '#shared/db/usage-repository'
import { settleAfterResponse } from '#shared/http/after-response'
import { TRACE_OP_NAME } from '#shared/inference/trace-completion'
import { flushUsage, hourOf } from '#shared/inference/usage-meter'
import { uuidv7 } from '#shared/tracing/ids'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'

const { upstream, caller, model } = await upstreamModelFixture()

const messages = [{ role: 'user', content: 'Hello big world' }]

type ErrorBody = { error: { message: string; type: string; param: string | null; code: number } }

function chat(headers: Record<string, string>) {
  return chatApp.request('/v1/chat/completions', jsonInit({ messages, model }, { ...caller.bearer, ...headers }))
}

async function meteredRequests(project: string): Promise<number> {
  await flushUsage()
  const rows = await listUsage(caller.entity, hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date()), project)
  return rows.reduce((n, c) => n + c.requests, 0)
}

// The completion's call, found the way a Weave client finds it; written after the response.
async function tracedOps(projectId: string): Promise<string[]> {
  await settleAfterResponse()
  const res = await queryApp.request('/calls/stream_query', jsonInit({ project_id: projectId }, caller.basic))
  return (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { op_name: string }).op_name)
}

describe('a blank project header counts as absent (QA)', () => {
  it.each([
    ['empty', ''],
    ['only spaces', '   '],
  ])('attributes to OpenAI-Project when Compat-Project is %s', async (_, blank) => {
    // Prepare
    const project = `blank-compat-${randomUUID().slice(0, 8)}`

    // Act
    const res = await chat({ 'Compat-Project': blank, 'OpenAI-Project': `${caller.entity}/${project}` })
    await res.json()

    // Assess
    expect(res.status).toBe(200)
    expect(await meteredRequests(project)).toBe(1)
    expect(await tracedOps(`${caller.entity}/${project}`)).toEqual([TRACE_OP_NAME])
  })

  it('attributes to the default project `inference` when both headers are blank', async () => {
    // Prepare
    const before = await meteredRequests('inference')

    // Act
    const res = await chat({ 'Compat-Project': '', 'OpenAI-Project': ' ' })
    await res.json()

    // Assess
    expect(res.status).toBe(200)
    expect(await meteredRequests('inference')).toBe(before + 1)
  })

  it('names OpenAI-Project as the param of a malformed value sent beside a blank Compat-Project', async () => {
    // Act
    const res = await chat({ 'Compat-Project': '', 'OpenAI-Project': 'no-slash' })
    const body = (await res.json()) as ErrorBody

    // Assess
    expect(res.status).toBe(400)
    expect(body.error.param).toBe('OpenAI-Project')
  })

  it('resolves GET /v1/usage `project` against the OpenAI-Project entity beside a blank Compat-Project', async () => {
    // Prepare: the caller belongs to a second entity, which only the OpenAI-Project header names
    const team = `team-${randomUUID().slice(0, 8)}`
    await addMembership({ userId: caller.userId, entity: team, role: 'member', addedAt: new Date().toISOString() })
    clearAuthCache()
    const headers = { ...caller.bearer, 'Compat-Project': '', 'OpenAI-Project': `${team}/anything` }

    // Act
    const res = await usageApp.request('/v1/usage?project=alpha', { headers })
    const body = (await res.json()) as { entity: string; project: string | null }

    // Assess
    expect(res.status).toBe(200)
    expect(body).toMatchObject({ entity: team, project: `${team}/alpha` })
  })
})

// A completion is traced as a call whose trace index key, `CALLTRACE#<project id>#<trace id>` with a 36-character
// UUIDv7 trace id, is its longest key: DynamoDB's 2,048-byte partition key limit leaves the project id 2,001 bytes.
const LONGEST_PROJECT_ID_BYTES = 2048 - 'CALLTRACE#'.length - '#'.length - 36

// A project id of exactly `bytes` UTF-8 bytes, mostly `é`: about half as many characters as bytes, so a limit counted
// in characters would let the longer one through. (A header carries Latin-1 characters, one per byte sent; the id
// stored, and so the limit, is that text's UTF-8, as for the same id sent to the tracing family in JSON.)
function projectIdOf(bytes: number): string {
  const prefix = `${caller.entity}/long-`
  const room = bytes - Buffer.byteLength(prefix)
  const id = prefix + 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2)
  expect(Buffer.byteLength(id)).toBe(bytes)
  return id
}

function startCall(projectId: string) {
  const id = uuidv7()
  const start = {
    project_id: projectId,
    id,
    trace_id: id,
    op_name: TRACE_OP_NAME,
    started_at: new Date().toISOString(),
  }
  return startApp.request('/call/start', jsonInit({ start: { ...start, attributes: {}, inputs: {} } }, caller.basic))
}

describe('a project id too long for its traces to be stored (QA)', () => {
  it('accepts the longest project id end to end: answered, metered and traced', async () => {
    // Prepare
    const projectId = projectIdOf(LONGEST_PROJECT_ID_BYTES)
    const project = projectId.slice(caller.entity.length + 1)

    // Act
    const res = await chat({ 'OpenAI-Project': projectId })
    await res.json()
    const tracing = await startCall(projectId)

    // Assess
    expect(res.status).toBe(200)
    expect(await meteredRequests(project)).toBe(1)
    expect(await tracedOps(projectId)).toContain(TRACE_OP_NAME)
    expect(tracing.status).toBe(200)
  })

  it.each([
    ['OpenAI-Project', {}],
    ['Compat-Project', { 'OpenAI-Project': `${caller.entity}/fine` }],
  ])(
    'refuses one byte more in %s with a 400 naming it, before any work; tracing refuses it too',
    async (header, extra) => {
      // Prepare
      const projectId = projectIdOf(LONGEST_PROJECT_ID_BYTES + 1)
      const project = projectId.slice(caller.entity.length + 1)
      const before = upstream.seen.length

      // Act
      const res = await chat({ ...extra, [header]: projectId })
      const body = (await res.json()) as ErrorBody
      const tracing = await startCall(projectId)

      // Assess
      expect(res.status).toBe(400)
      expect(body.error).toEqual({
        message: `The project id is too long to be stored as a key (at most ${LONGEST_PROJECT_ID_BYTES} bytes in UTF-8)`,
        type: 'BadRequestError',
        param: header,
        code: 400,
      })
      expect(upstream.seen.length).toBe(before)
      expect(await meteredRequests(project)).toBe(0)
      expect(await tracedOps(projectId)).toEqual([])
      expect(tracing.status).toBe(400)
    },
  )

  it('refuses the header on GET /v1/usage as well', async () => {
    // Act
    const res = await usageApp.request('/v1/usage', {
      headers: { ...caller.bearer, 'OpenAI-Project': projectIdOf(LONGEST_PROJECT_ID_BYTES + 1) },
    })

    // Assess
    expect(res.status).toBe(400)
    expect(((await res.json()) as ErrorBody).error.param).toBe('OpenAI-Project')
  })
})
