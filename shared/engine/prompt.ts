import { CHATML_TEMPLATE, ChatTemplateError, renderChat } from '#shared/engine/chat-template'
import type { ResolvedEngineSettings } from '#shared/engine/settings'
import { encode, TOKEN } from '#shared/engine/tokenizer'
import { BadRequestError } from '#shared/errors/http-error'
import { MEDIA_PARTS, partType, TEXT_PARTS } from '#shared/inference/message-rules'
import { checkTokenizeParams } from '#shared/inference/serving-rules'
import { CHAT_DEFAULTS, type ChatCompletionRequest, type ContentPart } from '#shared/schemas/chat-completion'

/** The tokenized prompt of a request and what the response needs to know about it. */
export type Prompt = {
  ids: number[]
  /** The response message role: `assistant`, or the last message's role without a generation prompt. */
  role: string
  /** The last message's text as `echo` prepends it: its text parts joined with newlines. */
  lastContent: string
  lastRole: string
  /** The last user message's text: what the answer is about. */
  lastUserText: string
  /** The prompt leaves a `<think>` section open, so the output starts with reasoning. */
  reasoningOpen: boolean
}

const NO_TEMPLATE =
  'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.'

// The text of a text-like part (a string part, `text`, `input_text`, `output_text`, `refusal`, `thinking`), else null.
function partText(part: ContentPart): string | null {
  if (typeof part === 'string') return part
  const key = typeof part.type === 'string' ? TEXT_PARTS.get(part.type) : undefined
  const text = key === undefined ? undefined : part[key]
  return typeof text === 'string' ? text : null
}

// The text the template renders for a message: its text parts back to back (the ChatML template's `text` macro).
function messageText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((p: ContentPart) => partText(p) ?? '').join('')
}

// What vLLM's `echo` prepends for a content list: the `text` of each part its parser gave the template (every
// text-like part becomes `{type: "text", text}`; a text or refusal part without its text is left out), joined with
// newlines (`chat_completion_full_generator`). A part without a text (a null `thinking`) is skipped where vLLM fails.
function echoedText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((p: ContentPart) => partText(p))
    .filter((t) => t !== null)
    .join('\n')
}

// Keys of vLLM's content part types; any other key of a part reaches the template (`_collect_extra_fields`).
const KNOWN_PART_KEYS = new Set([
  ...['type', 'text', 'refusal', 'thinking', 'closed', 'name', 'uuid', 'data', 'file', 'input_audio', 'image_pil'],
  ...['image_url', 'audio_url', 'video_url', 'image_embeds', 'audio_embeds', 'video_embeds'],
])

function withExtraKeys(out: Record<string, unknown>, part: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(part)) if (!KNOWN_PART_KEYS.has(key)) out[key] = part[key]
  return out
}

// A content list as vLLM's parser gives it to a template that iterates parts (the "openai" content format): text-like
// parts as `{type: "text", text}`, a text or refusal part without its text left out, media as `{type: <modality>}`
// (a text-only model never gets here: message-rules.ts refused them). The engine has no prompt embeddings.
function templateContent(content: readonly ContentPart[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (const part of content) {
    if (typeof part === 'string') {
      out.push({ type: 'text', text: part })
      continue
    }
    const type = partType(part)
    const key = TEXT_PARTS.get(type)
    if (key !== undefined) {
      const text = part[key] ?? null
      if (text === null && (type === 'text' || type === 'refusal')) continue
      out.push(withExtraKeys({ type: 'text', text }, part))
    } else if (type === 'tool_reference') {
      out.push({ type, name: part.name ?? null })
    } else if (type === 'prompt_embeds') {
      throw new BadRequestError(
        part.data
          ? 'You must set `--enable-prompt-embeds` to input `prompt_embeds`'
          : 'prompt_embeds content part requires a non-empty `data` field with base64-encoded tensor bytes.',
        { param: 'prompt_embeds' },
      )
    } else {
      out.push(withExtraKeys({ type: MEDIA_PARTS.get(type) ?? type }, part))
    }
  }
  return out
}

/** Renders and tokenizes the conversation (template, kwargs, special tokens, truncation). */
export function buildPrompt(request: ChatCompletionRequest, settings: ResolvedEngineSettings): Prompt {
  const kwargs: Record<string, unknown> = { ...(request.chat_template_kwargs ?? {}) }
  const requestTemplate = request.chat_template ?? kwargs.chat_template
  delete kwargs.chat_template
  if (request.reasoning_effort) kwargs.reasoning_effort = request.reasoning_effort
  const template =
    typeof requestTemplate === 'string'
      ? requestTemplate
      : settings.chatTemplate === undefined
        ? CHATML_TEMPLATE
        : settings.chatTemplate
  if (template === null) throw new BadRequestError(NO_TEMPLATE)
  // vLLM renames the deprecated `reasoning_content` before templating (docs/inference.md §3.12).
  const messages = request.messages.map((m) => {
    const { reasoning_content, ...rest } = m
    const message: Record<string, unknown> =
      reasoning_content !== undefined && rest.reasoning == null ? { ...rest, reasoning: reasoning_content } : rest
    if (Array.isArray(m.content)) message.content = templateContent(m.content)
    return message
  })
  const addGenerationPrompt = request.add_generation_prompt ?? CHAT_DEFAULTS.add_generation_prompt
  // vLLM builds its `TokenizeParams` before it renders the chat, so these refusals come first.
  const { room } = checkTokenizeParams(request, settings.maxModelLen)
  let text: string
  try {
    text = renderChat({
      template,
      messages,
      tools: request.tools,
      documents: request.documents,
      addGenerationPrompt,
      continueFinalMessage: request.continue_final_message ?? false,
      kwargs,
    })
  } catch (error) {
    if (error instanceof ChatTemplateError) throw new BadRequestError(error.message, { cause: error })
    throw error
  }
  let ids = encode(text, request.add_special_tokens ?? CHAT_DEFAULTS.add_special_tokens)
  const truncate = request.truncate_prompt_tokens
  if (typeof truncate === 'number') {
    // vLLM's `TokenizeParams._token_truncation`: -1 keeps the room the output budget leaves, 0 keeps nothing (and the
    // empty prompt is refused below), from the left as the tokenizer truncates.
    const keep = truncate < 0 ? room : truncate
    if (ids.length > keep) ids = keep === 0 ? [] : ids.slice(ids.length - keep)
  }
  if (ids.length === 0) throw new BadRequestError('The decoder prompt cannot be empty')
  const last = request.messages[request.messages.length - 1]
  return {
    ids,
    role: addGenerationPrompt ? 'assistant' : (last?.role ?? 'assistant'),
    lastContent: echoedText(last?.content),
    lastRole: last?.role ?? '',
    lastUserText: messageText([...request.messages].reverse().find((m) => m.role === 'user')?.content),
    reasoningOpen: ids.lastIndexOf(TOKEN.thinkStart) > ids.lastIndexOf(TOKEN.thinkEnd),
  }
}

/**
 * Where each user message's text lies in the prompt's token ids, as `[start, end)` in prompt order: what prompt
 * logprobs read the topic from, so that a position sees only the part of the question before it.
 */
export function userTextSpans(ids: readonly number[], messages: ChatCompletionRequest['messages']): [number, number][] {
  let prompt = ''
  for (const id of ids) prompt += String.fromCharCode(id)
  const spans: [number, number][] = []
  // From the last message backwards, each before the one after it: a quote of a message earlier in the prompt (a
  // document, the system text) or in a later answer is not taken for it. The text is trimmed because templates often
  // trim it (the words, all the topic reads, are the same); a message not found (a template that rewrites it, a
  // truncated prompt) gives no span.
  let bound = prompt.length
  for (let m = messages.length - 1; m >= 0; m--) {
    const message = messages[m]
    let text = ''
    for (const id of encode(messageText(message?.content).trim())) text += String.fromCharCode(id)
    const at = bound < text.length ? -1 : prompt.lastIndexOf(text, bound - text.length)
    if (at < 0) continue
    bound = at
    if (message?.role === 'user') spans.push([at, at + text.length])
  }
  return spans.reverse()
}
