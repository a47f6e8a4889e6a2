import { AttributeConflictError, attributeAt, attributeTree } from '#shared/otel/attribute-tree'
import { jsonValue } from '#shared/otel/conventions'
import type { AttrValue, OtelEvent } from '#shared/otel/otlp-model'

/**
 * GenAI content carried by span events rather than attributes (older GenAI semantic conventions, Google GenAI,
 * OpenAI Agents via logfire, OpenLIT): `gen_ai.{system,user,assistant,tool}.message` events are the conversation sent,
 * `gen_ai.choice` events the model's answers; `gen_ai.content.prompt` / `gen_ai.content.completion` events carry
 * `gen_ai.prompt` / `gen_ai.completion` attributes. Used only when no attribute names the inputs or output.
 */

const ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
}

function eventTree(event: OtelEvent): Record<string, AttrValue> {
  try {
    return attributeTree(event.attributes)
  } catch (error) {
    // An event whose keys collide is kept flat rather than failing its span.
    if (error instanceof AttributeConflictError) return Object.fromEntries(event.attributes)
    throw error
  }
}

/** The messages the span's events sent and received, under the attribute names they stand for. */
export function messagesFromEvents(events: readonly OtelEvent[]): {
  inputs?: Record<string, AttrValue>
  output?: Record<string, AttrValue>
} {
  const sent: AttrValue[] = []
  const received: AttrValue[] = []
  let prompt: AttrValue | undefined
  let completion: AttrValue | undefined
  for (const event of events) {
    const role = ROLES[event.name]
    if (role !== undefined) {
      const tree = eventTree(event)
      const message: Record<string, AttrValue> = { role }
      for (const [k, v] of Object.entries(tree)) message[k] = k === 'content' || k === 'tool_calls' ? jsonValue(v) : v
      sent.push(message)
    } else if (event.name === 'gen_ai.choice') {
      const tree = eventTree(event)
      const choice: Record<string, AttrValue> = {}
      for (const [k, v] of Object.entries(tree)) choice[k] = k === 'message' ? jsonValue(v) : v
      received.push(choice)
    } else if (event.name === 'gen_ai.content.prompt') {
      prompt = attributeAt(eventTree(event), 'gen_ai.prompt')
    } else if (event.name === 'gen_ai.content.completion') {
      completion = attributeAt(eventTree(event), 'gen_ai.completion')
    }
  }
  const result: { inputs?: Record<string, AttrValue>; output?: Record<string, AttrValue> } = {}
  if (sent.length > 0) result.inputs = { 'gen_ai.input.messages': sent }
  else if (prompt !== undefined) result.inputs = { 'gen_ai.prompt': jsonValue(prompt) }
  if (received.length > 0) result.output = { 'gen_ai.output.messages': received }
  else if (completion !== undefined) result.output = { 'gen_ai.completion': jsonValue(completion) }
  return result
}
