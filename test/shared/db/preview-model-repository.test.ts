import { randomUUID } from 'node:crypto'
import { PutCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { db, table } from '#shared/db/client'
import { createPreviewModel, getPreviewModel } from '#shared/db/preview-model-repository'
import type { PreviewModel } from '#shared/schemas/preview-model'

const model = (): PreviewModel => ({
  id: randomUUID(),
  entity: 'acme',
  project: 'rl',
  name: `m-${randomUUID().slice(0, 8)}`,
  base_model: 'base',
  run_id: null,
  created_at: new Date().toISOString(),
  step: 0,
})

describe('createPreviewModel', () => {
  it('completes a create that stopped after claiming the name', async () => {
    // Prepare: only the name claim exists, as after a crash between the two writes.
    const claimed = model()
    await db().send(
      new PutCommand({
        TableName: table(),
        Item: { PK: `PMODELNAME#acme/rl/${claimed.name}`, SK: 'PMODELNAME', ...claimed },
      }),
    )

    // Act
    const result = await createPreviewModel({ ...model(), name: claimed.name }, 'another request')

    // Assess
    expect(result).toEqual({ model: claimed, created: false })
    expect(await getPreviewModel(claimed.id)).toEqual(claimed)
  })

  it('never gives one name two ids under concurrent creates', async () => {
    // Prepare
    const name = `m-${randomUUID().slice(0, 8)}`

    // Act
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => createPreviewModel({ ...model(), name }, `request ${i}`)),
    )

    // Assess
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(new Set(results.map((r) => r.model.id)).size).toBe(1)
  })
})
