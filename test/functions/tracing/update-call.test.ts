import { describe, expect, it } from 'vitest'
import { app as readApp } from '#functions/tracing/read-call/handler'
import { app, handler } from '#functions/tracing/update-call/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { authorizerFor, newProject, startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { holdDynamoCommands } from '../../support/hold-dynamo.js'

describe('POST /call/update', () => {
  it('sets the display name, clears it with an empty string, and survives a retried start', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project)
    await writeCalls(caller, [{ start }])
    const read = async () =>
      (
        (await (
          await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))
        ).json()) as {
          call: { display_name: string | null }
        }
      ).call.display_name

    // Act
    const set = await app.request(
      '/call/update',
      jsonInit({ project_id: project, call_id: start.id, display_name: 'New' }, caller.basic),
    )
    await writeCalls(caller, [{ start }])
    const afterRetry = await read()
    await app.request(
      '/call/update',
      jsonInit({ project_id: project, call_id: start.id, display_name: '' }, caller.basic),
    )

    // Assess
    expect(set.status).toBe(200)
    expect(await set.json()).toEqual({})
    expect(afterRetry).toBe('New')
    expect(await read()).toBeNull()
  })

  it("keeps a name set before the call's start and gives it to the start when it arrives, as Weave merges it", async () => {
    // Prepare: the SDKs batch starts, so a rename right after a call can reach the server first.
    const caller = await newCaller()
    const project = newProject(caller)
    const plain = startPart(project)
    const named = startPart(project, { display_name: 'from the start' })
    const cleared = startPart(project, { display_name: 'cleared later' })
    const never = startPart(project)
    const update = (id: unknown, name: string) =>
      app.request('/call/update', jsonInit({ project_id: project, call_id: id, display_name: name }, caller.basic))
    const read = async (id: unknown) =>
      (
        (await (await readApp.request('/call/read', jsonInit({ project_id: project, id }, caller.basic))).json()) as {
          call: { display_name: string | null } | null
        }
      ).call

    // Act
    const answers = await Promise.all([
      update(plain.id, 'Renamed early'),
      update(named.id, 'Renamed over'),
      update(cleared.id, ''),
      update(never.id, 'Never started'),
    ])
    await writeCalls(caller, [{ start: plain }, { start: named }, { start: cleared }])

    // Assess: the rename came after the call was made, so it wins over the start's own name; a call never started
    // stays unlisted.
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(await Promise.all(answers.map((r) => r.json()))).toEqual([{}, {}, {}, {}])
    expect((await read(plain.id))?.display_name).toBe('Renamed early')
    expect((await read(named.id))?.display_name).toBe('Renamed over')
    expect((await read(cleared.id))?.display_name).toBeNull()
    expect(await read(never.id)).toBeNull()
  })

  it('applies a rename that arrives while the start is being stored, after the ingest read the pending names', async () => {
    // Prepare: the ingest's writes held until the rename has been answered, so the rename finds no start and the
    // ingest (already past its read) found no pending name: the race the ingest's re-read after writing closes.
    const caller = await newCaller()
    const project = newProject(caller)
    const start = startPart(project, { display_name: 'from the start' })
    const hold = holdDynamoCommands(({ name }) => name === 'BatchWriteItemCommand')

    try {
      // Act
      const ingest = writeCalls(caller, [{ start }])
      await hold.arrived()
      const rename = await app.request(
        '/call/update',
        jsonInit({ project_id: project, call_id: start.id, display_name: 'Renamed meanwhile' }, caller.basic),
      )
      hold.release()
      await ingest

      // Assess
      expect(rename.status).toBe(200)
      const read = await readApp.request('/call/read', jsonInit({ project_id: project, id: start.id }, caller.basic))
      expect(((await read.json()) as { call: { display_name: string } }).call.display_name).toBe('Renamed meanwhile')
    } finally {
      hold.stop()
    }
  })

  it('answers 400 without display_name and 403 for a foreign project', async () => {
    const caller = await newCaller()
    const stranger = await newCaller()
    const project = newProject(caller)
    const none = await app.request('/call/update', jsonInit({ project_id: project, call_id: 'x' }, caller.basic))
    expect(none.status).toBe(400)
    expect(await none.json()).toEqual({ reason: 'One of [display_name] is required for call update' })
    const foreign = await app.request(
      '/call/update',
      jsonInit({ project_id: project, call_id: 'x', display_name: 'n' }, stranger.basic),
    )
    expect(foreign.status).toBe(403)
  })
  it('works when invoked as a Lambda behind the REST authorizer', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const event = restEvent({
      method: 'POST',
      path: '/call/update',
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify({ project_id: project, call_id: 'not-started-yet', display_name: 'x' }),
      authorizer: authorizerFor(caller),
    })

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({})
  })
})
