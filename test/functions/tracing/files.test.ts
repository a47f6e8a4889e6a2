import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-file/handler'
import { app as contentApp } from '#functions/tracing/read-file-content/handler'
import { jsonInit } from '../../support/auth.js'
import { newProjectCaller, type ProjectCaller } from '../../support/tracing.js'

async function upload(
  c: ProjectCaller,
  bytes: Uint8Array,
  options: { path?: string; project?: string; expected?: string } = {},
) {
  const form = new FormData()
  form.set('project_id', options.project ?? c.project)
  form.set('file', new Blob([bytes]), 'image.png')
  if (options.expected !== undefined) form.set('expected_digest', options.expected)
  const res = await createApp.request(options.path ?? '/file/create', { method: 'POST', headers: c.basic, body: form })
  return { status: res.status, body: (await res.json()) as { digest: string } }
}

async function content(c: ProjectCaller, digest: string, path = '/file/content') {
  return contentApp.request(path, jsonInit({ project_id: c.project, digest }, c.basic))
}

describe('files', () => {
  it('stores an upload under its content digest and returns the bytes', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const created = await upload(caller, new TextEncoder().encode('hello'))
    const res = await content(caller, created.body.digest)

    // Assess
    expect(created).toEqual({ status: 200, body: { digest: 'LPJNulXwow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe('hello')
  })

  it('keeps a file larger than the DynamoDB item limit byte-identical, also through the /files aliases', async () => {
    // Prepare: 1.5 MB of every byte value.
    const caller = await newProjectCaller()
    const bytes = Uint8Array.from({ length: 1_500_000 }, (_, i) => (i * 7) % 256)

    // Act
    const created = await upload(caller, bytes, { path: '/files/create' })
    const again = await upload(caller, bytes)
    const res = await content(caller, created.body.digest, '/files/content')

    // Assess
    expect(again.body).toEqual(created.body)
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
  })

  it('answers 409 for a wrong expected digest and 404 for an unknown digest', async () => {
    const caller = await newProjectCaller()
    const mismatch = await upload(caller, new Uint8Array([1, 2, 3]), { expected: 'nope' })
    const unknown = await content(caller, 'LPJNulXwow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ')
    expect(mismatch.status).toBe(409)
    // Weave's `validate_expected_digest(label="file")`.
    expect(mismatch.body).toEqual({
      reason: 'Client file digest nope != server digest A5BYxvLAy0ksUzsKTRTvd8wPeKvMztUofYShogEcX4E',
    })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({
      reason: 'File with digest LPJNulXwow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ not found',
    })
  })

  it('answers 422 without a file and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const form = new FormData()
    form.set('project_id', a.project)
    const noFile = await createApp.request('/file/create', { method: 'POST', headers: a.basic, body: form })
    const foreign = await upload(a, new Uint8Array([1]), { project: b.project })
    const foreignRead = await contentApp.request(
      '/file/content',
      jsonInit({ project_id: b.project, digest: 'x' }, a.basic),
    )
    expect(noFile.status).toBe(422)
    expect(foreign.status).toBe(403)
    expect(foreignRead.status).toBe(403)
  })
})
