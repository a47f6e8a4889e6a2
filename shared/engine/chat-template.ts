import { Template } from '@huggingface/jinja'
import { SPECIAL_TOKENS } from '#shared/engine/tokenizer'
import { CONTINUE_WITH_GENERATION_PROMPT } from '#shared/inference/message-rules'

/**
 * Chat templating as Hugging Face tokenizers do it: a Jinja template rendered with `@huggingface/jinja`, given the
 * messages, `tools`, `documents`, `add_generation_prompt`, the special tokens and any `chat_template_kwargs`;
 * `continue_final_message` cuts the text right after the final message so the model continues it.
 */

/**
 * ChatML, with a tools block, a documents block and Qwen-3-style reasoning: `reasoning_effort` (or
 * `enable_thinking`) leaves a `<think>` section open for the model; otherwise an empty one is closed for it.
 */
export const CHATML_TEMPLATE = `{%- macro text(content) -%}
{%- if content is string -%}{{ content }}{%- elif content is iterable -%}{%- for part in content -%}{%- if part.type == 'text' -%}{{ part.text }}{%- endif -%}{%- endfor -%}{%- endif -%}
{%- endmacro -%}
{%- if tools or documents -%}
{{- '<|im_start|>system\\n' -}}
{%- if messages[0].role == 'system' -%}{{- text(messages[0].content) + '\\n\\n' -}}{%- endif -%}
{%- if tools -%}
{{- '# Tools\\n\\nYou may call these functions:\\n' -}}
{%- for tool in tools -%}{{- (tool.function if tool.function is defined else tool) | tojson + '\\n' -}}{%- endfor -%}
{%- endif -%}
{%- if documents -%}
{{- '# Documents\\n' -}}
{%- for doc in documents -%}{{- '\\n## Document ' + loop.index|string + '\\n' -}}{%- for key, value in doc|items -%}{{- key + ': ' + value + '\\n' -}}{%- endfor -%}{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>\\n' -}}
{%- endif -%}
{%- for message in messages -%}
{%- if not (loop.first and message.role == 'system' and (tools or documents)) -%}
{{- '<|im_start|>' + message.role + '\\n' -}}
{%- if message.role == 'assistant' and message.reasoning -%}{{- '<think>\\n' + message.reasoning + '\\n</think>\\n\\n' -}}{%- endif -%}
{{- text(message.content) + '<|im_end|>\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if reasoning_effort or enable_thinking -%}{{- '<think>\\n' -}}{%- else -%}{{- '<think></think>\\n\\n' -}}{%- endif -%}
{%- endif -%}`

/** What `renderChat` needs from a request. */
export type RenderChatOptions = {
  template: string
  messages: readonly Record<string, unknown>[]
  tools?: unknown
  documents?: unknown
  addGenerationPrompt: boolean
  continueFinalMessage: boolean
  kwargs?: Record<string, unknown>
}

/** Raised when the template cannot be rendered; the backend answers it with a 400 carrying the renderer's message. */
export class ChatTemplateError extends Error {}

const compiled = new Map<string, Template>()

function templateFor(source: string): Template {
  let t = compiled.get(source)
  if (!t) {
    t = new Template(source)
    if (compiled.size > 64) compiled.clear()
    compiled.set(source, t)
  }
  return t
}

function finalText(message: Record<string, unknown> | undefined): string {
  const content = message?.content
  if (typeof content === 'string') return content
  // Hugging Face takes the last part that has a text.
  if (Array.isArray(content)) {
    for (let i = content.length - 1; i >= 0; i--) {
      const text = (content[i] as { text?: unknown } | null)?.text
      if (typeof text === 'string') return text
    }
  }
  return ''
}

/** Renders the prompt text for a conversation. */
export function renderChat(options: RenderChatOptions): string {
  if (options.continueFinalMessage && options.addGenerationPrompt) {
    throw new ChatTemplateError(CONTINUE_WITH_GENERATION_PROMPT)
  }
  let rendered: string
  try {
    rendered = templateFor(options.template).render({
      ...options.kwargs,
      messages: options.messages,
      tools: options.tools ?? null,
      documents: options.documents ?? null,
      add_generation_prompt: options.addGenerationPrompt,
      continue_final_message: options.continueFinalMessage,
      bos_token: SPECIAL_TOKENS[0],
      eos_token: SPECIAL_TOKENS[3],
    })
  } catch (error) {
    throw new ChatTemplateError(error instanceof Error ? error.message : String(error), { cause: error })
  }
  if (!options.continueFinalMessage) return rendered
  // Hugging Face: cut right after the final message so generation continues it.
  const final = finalText(options.messages[options.messages.length - 1])
  const at = rendered.lastIndexOf(final.trim())
  if (final.trim() === '' || at < 0) {
    throw new ChatTemplateError(
      'continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message.',
    )
  }
  const kept =
    rendered.slice(at, at + final.trimStart().length) === final.trimStart() ? final.trimStart() : final.trim()
  return rendered.slice(0, at + kept.length)
}
