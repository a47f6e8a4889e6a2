import { randomUUID } from 'node:crypto'
import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { db, inBackground, table } from '#shared/db/client'

type Command = GetCommand

// Sends a read and tells at which of the SDK's steps (after any yield there) the event loop had already turned once
// since the send began: a callback queued with setImmediate just before `send` has run by then, or not.
async function turnsSeen(command: Command): Promise<Record<string, boolean>> {
  let turned = false
  const seen: Record<string, boolean> = {}
  // One inspecting middleware for three steps, whose handler types the stack's overloads spell out per step.
  const stack = command.middlewareStack as unknown as {
    add(
      middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
      options: object,
    ): void
  }
  for (const step of ['serialize', 'build', 'finalizeRequest'] as const) {
    stack.add(
      (next) => async (args) => {
        seen[step] = turned
        return next(args)
      },
      { step, priority: 'low' },
    )
  }
  setImmediate(() => {
    turned = true
  })
  const { Item } = await db().send(command)
  expect(Item).toBeUndefined()
  return seen
}

const read = () => new GetCommand({ TableName: table(), Key: { PK: `BG#${randomUUID()}`, SK: 'x' } })

describe('inBackground', () => {
  it('lets the event loop run before the SDK serializes, builds and signs a command, which still succeeds', async () => {
    // Act
    const plain = await turnsSeen(read())
    const background = await turnsSeen(inBackground(read()))

    // Assess
    expect(plain).toEqual({ serialize: false, build: false, finalizeRequest: false })
    expect(background).toEqual({ serialize: true, build: true, finalizeRequest: true })
  })
})
