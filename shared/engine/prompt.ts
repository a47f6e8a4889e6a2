import { CHATML_TEMPLATE, ChatTemplateError, renderChat } from '#shared/engine/chat-template'
import type { ResolvedEngineSettings } from '#shared/engine/settings'
import { encode, TOKEN } from '#shared/engine/tokenizer'
import { BadRequestError } from '#shared/errors/http-error'
import { CHAT_DEFAULTS, type ChatCompletionRequest } from '#shared/schemas/chat-completion'

/** The tokenized prompt of a request and what the response needs to know about it. */
export type Prompt = {
  ids: number[]
  /** The response message role: `assistant`, or the last message's role without a generation prompt. */
  role: string
  /** The last message's text, for `echo`. */
  lastContent: string
  lastRole: string
  /** The last user message's text: what the answer is about. */
  lastUserText: string
  /** The prompt leaves a `<think>` section open, so the output starts with reasoning. */
  reasoningOpen: boolean
}

const NO_TEMPLATE =
  'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.'

function messageText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('')
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
    return reasoning_content !== undefined && rest.reasoning == null ? { ...rest, reasoning: reasoning_content } : rest
  })
  const addGenerationPrompt = request.add_generation_prompt ?? CHAT_DEFAULTS.add_generation_prompt
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
  if (typeof truncate === 'number' && truncate !== 0) {
    if (truncate > settings.maxModelLen) {
      throw new BadRequestError(
        'truncate_prompt_tokens value is greater than max_model_len. Please, select a smaller truncation size.',
      )
    }
    const keep = truncate === -1 ? settings.maxModelLen : truncate
    if (ids.length > keep) ids = ids.slice(ids.length - keep)
  }
  if (ids.length === 0) throw new BadRequestError('The decoder prompt cannot be empty')
  const last = request.messages[request.messages.length - 1]
  return {
    ids,
    role: addGenerationPrompt ? 'assistant' : (last?.role ?? 'assistant'),
    lastContent: messageText(last?.content),
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
