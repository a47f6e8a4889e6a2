import { describe, expect, it } from 'vitest'
import { app as addTags } from '#functions/tracing/add-obj-tags/handler'
import { app as deleteApp } from '#functions/tracing/delete-obj/handler'
import { app as listAliases } from '#functions/tracing/list-aliases/handler'
import { app as listTags } from '#functions/tracing/list-tags/handler'
import { app as readApp } from '#functions/tracing/read-obj/handler'
import { app as removeAliases } from '#functions/tracing/remove-obj-aliases/handler'
import { app as removeTags } from '#functions/tracing/remove-obj-tags/handler'
import { app as setAliases } from '#functions/tracing/set-obj-aliases/handler'
import { holdDynamoCommands } from '../../support/hold-dynamo.js'
import { publish } from '../../support/objects.js'
import { get, newProjectCaller, send } from '../../support/tracing.js'

// A label as the held `PutItem` carries it (plain or marshalled, depending on where the hold sits in the SDK's stack).
const labelOf = (value: unknown) => (typeof value === 'object' && value !== null ? (value as { S?: string }).S : value)

describe('object tags and aliases', () => {
  it('takes back a tag and an alias written while obj/delete removed their version, answering 404', async () => {
    // Prepare: the label requests pass their check that the version is live, then wait until the delete (which marks
    // the version, then drops its labels) has finished; without a check after writing, both labels outlive the version
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })
    const hold = holdDynamoCommands(({ name, input }) => {
      const item = input.Item as Record<string, unknown> | undefined
      return name === 'PutItemCommand' && (labelOf(item?.tag) === 'racing' || labelOf(item?.alias) === 'racing')
    })

    try {
      // Act
      const tag = send(
        addTags,
        `/objs/o/versions/${d0}/tags`,
        { project_id: caller.project, tags: ['racing'] },
        caller,
        'PUT',
      )
      const alias = send(
        setAliases,
        '/objs/o/aliases',
        { project_id: caller.project, digest: d0, aliases: ['racing'] },
        caller,
        'PUT',
      )
      await hold.arrived(2)
      const deleted = await send(
        deleteApp,
        '/obj/delete',
        { project_id: caller.project, object_id: 'o', digests: [d0] },
        caller,
      )
      hold.release()

      // Assess
      expect(deleted.status).toBe(200)
      expect((await tag).status).toBe(404)
      expect((await alias).status).toBe(404)
      const tags = await get(listTags, `/tags?project_id=${encodeURIComponent(caller.project)}`, caller)
      const aliases = await get(listAliases, `/aliases?project_id=${encodeURIComponent(caller.project)}`, caller)
      expect(tags.body.tags).not.toContain('racing')
      expect(aliases.body.aliases).not.toContain('racing')
    } finally {
      hold.stop()
    }
  })

  it('adds tags without duplicates and lists them sorted on the version and in the project', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    const p0 = await publish(caller, 'p', { v: 0 })

    // Act
    const put = await send(
      addTags,
      `/objs/o/versions/${d0}/tags`,
      { project_id: caller.project, tags: ['zeta', 'alpha one', 'zeta', 'v0'] },
      caller,
      'PUT',
    )
    await send(
      addTags,
      `/objs/p/versions/${p0}/tags`,
      { project_id: caller.project, tags: ['alpha one', 'latest'] },
      caller,
      'PUT',
    )
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: d0, include_tags_and_aliases: true },
      caller,
    )
    const tags = await get(listTags, `/tags?project_id=${encodeURIComponent(caller.project)}`, caller)

    // Assess
    expect(put).toEqual({ status: 200, body: {} })
    expect(read.body.obj.tags).toEqual(['alpha one', 'v0', 'zeta'])
    expect(tags.body).toEqual({ tags: ['alpha one', 'latest', 'v0', 'zeta'] })
  })

  it('reads a query parameter given more than once as its last value, as FastAPI does', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const other = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await send(addTags, `/objs/o/versions/${d0}/tags`, { project_id: caller.project, tags: ['mine'] }, caller, 'PUT')
    const project = (id: string) => `project_id=${encodeURIComponent(id)}`

    // Act
    const last = await get(listTags, `/tags?${project(other.project)}&${project(caller.project)}`, caller)
    const foreign = await get(listTags, `/tags?${project(caller.project)}&${project(other.project)}`, caller)

    // Assess: the last one is read, and checked against the caller's entities as any project is
    expect(last).toEqual({ status: 200, body: { tags: ['mine'] } })
    expect(foreign.status).toBe(403)
  })

  it('removes tags, treating unknown ones as a no-op', async () => {
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await send(addTags, `/objs/o/versions/${d0}/tags`, { project_id: caller.project, tags: ['a', 'b'] }, caller, 'PUT')
    const res = await send(
      removeTags,
      `/objs/o/versions/${d0}/tags/remove`,
      { project_id: caller.project, tags: ['a', 'zz'] },
      caller,
    )
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: d0, include_tags_and_aliases: true },
      caller,
    )
    expect(res).toEqual({ status: 200, body: {} })
    expect(read.body.obj.tags).toEqual(['b'])
  })

  it('moves an alias between versions and lists aliases with latest', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    const d1 = await publish(caller, 'o', { v: 1 })

    // Act
    await send(
      setAliases,
      '/objs/o/aliases',
      { project_id: caller.project, digest: d0, aliases: ['prod', 'v.2 beta'] },
      caller,
      'PUT',
    )
    await send(
      setAliases,
      '/objs/o/aliases',
      { project_id: caller.project, digest: 'latest', aliases: ['prod'] },
      caller,
      'PUT',
    )
    const r0 = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: d0, include_tags_and_aliases: true },
      caller,
    )
    const r1 = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'prod', include_tags_and_aliases: true },
      caller,
    )
    const aliases = await get(listAliases, `/aliases?project_id=${encodeURIComponent(caller.project)}`, caller)

    // Assess
    expect(r0.body.obj.aliases).toEqual(['v.2 beta'])
    expect(r1.body.obj).toMatchObject({ digest: d1, aliases: ['latest', 'prod'] })
    expect(aliases.body).toEqual({ aliases: ['latest', 'prod', 'v.2 beta'] })
  })

  it('removes aliases, treating unknown ones as a no-op', async () => {
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await send(
      setAliases,
      '/objs/o/aliases',
      { project_id: caller.project, digest: d0, aliases: ['prod'] },
      caller,
      'PUT',
    )
    const res = await send(
      removeAliases,
      '/objs/o/aliases/remove',
      { project_id: caller.project, aliases: ['prod', 'nope'] },
      caller,
    )
    const read = await send(
      readApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'prod' },
      caller,
    )
    expect(res).toEqual({ status: 200, body: {} })
    expect(read).toEqual({ status: 404, body: { reason: 'Obj o:prod not found' } })
  })

  it('answers 404 for tags or aliases on a missing or deleted version', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    await publish(caller, 'o', { v: 1 })
    await send(deleteApp, '/obj/delete', { project_id: caller.project, object_id: 'o', digests: [d0] }, caller)

    // Act
    const deletedTag = await send(
      addTags,
      `/objs/o/versions/${d0}/tags`,
      { project_id: caller.project, tags: ['a'] },
      caller,
      'PUT',
    )
    const missingAlias = await send(
      setAliases,
      '/objs/x/aliases',
      { project_id: caller.project, digest: d0, aliases: ['a'] },
      caller,
      'PUT',
    )

    // Assess
    expect(deletedTag).toEqual({ status: 404, body: { reason: `Object version o:${d0} not found` } })
    expect(missingAlias).toEqual({ status: 404, body: { reason: `Object version x:${d0} not found` } })
  })

  it('answers 422 for invalid tags and aliases', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const d0 = await publish(caller, 'o', { v: 0 })
    const tag = (t: string) =>
      send(addTags, `/objs/o/versions/${d0}/tags`, { project_id: caller.project, tags: [t] }, caller, 'PUT')
    const alias = (a: string) =>
      send(setAliases, '/objs/o/aliases', { project_id: caller.project, digest: d0, aliases: [a] }, caller, 'PUT')

    // Act
    const tagStatuses = await Promise.all(['', ' a', 'a ', 'a  b', 'a.b', 'a!', 'x'.repeat(257)].map(tag))
    const aliasStatuses = await Promise.all(['', '   ', 'a/b', 'a:b', 'latest', 'v3', 'x'.repeat(129)].map(alias))
    const okTag = await tag('x'.repeat(256))

    // Assess
    expect(tagStatuses.map((r) => r.status)).toEqual([422, 422, 422, 422, 422, 422, 422])
    expect(aliasStatuses.map((r) => r.status)).toEqual([422, 422, 422, 422, 422, 422, 422])
    expect(tagStatuses[4]?.body.detail[0].loc).toEqual(['body', 'tags', 0])
    expect(okTag.status).toBe(200)
  })

  it('answers 403 when listing a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const tags = await get(listTags, `/tags?project_id=${encodeURIComponent(b.project)}`, a)
    const aliases = await get(listAliases, `/aliases?project_id=${encodeURIComponent(b.project)}`, a)
    const missing = await get(listTags, '/tags', a)
    expect(tags.status).toBe(403)
    expect(aliases.status).toBe(403)
    expect(missing.status).toBe(422)
  })
})
