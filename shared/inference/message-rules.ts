import { BadRequestError } from '#shared/errors/http-error'
import { CHAT_DEFAULTS, type ChatCompletionRequest } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// What vLLM's chat layer refuses while it turns the messages into a prompt (raised while serving, so 400
// `BadRequestError`): Hugging Face's `apply_chat_template` arguments, and media parts for a text-only model.

/** Hugging Face `apply_chat_template`'s message when both flags are set (vLLM reports it as a 400). */
export const CONTINUE_WITH_GENERATION_PROMPT =
  'continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead.'

// The content part types vLLM's chat parser hands to the multimodal processor (`MM_PARSER_MAP` in
// vllm/entrypoints/chat_utils.py); text, thinking and refusal parts stay text.
const MEDIA_PARTS = new Set([
  'image_url',
  'input_image',
  'image_embeds',
  'image_pil',
  'audio_url',
  'input_audio',
  'audio_embeds',
  'video_url',
  'video_embeds',
])

/** Whether a catalog model takes media parts: as the catalog says, else upstream models do and reference ones do not. */
export function isMultimodal(model: CatalogModel): boolean {
  return model.multimodal ?? model.backend.kind === 'openai-compatible'
}

function hasMediaPart(request: ChatCompletionRequest): boolean {
  for (const message of request.messages) {
    const content = message.content
    if (!Array.isArray(content)) continue
    for (const part of content) if (MEDIA_PARTS.has(part.type)) return true
  }
  return false
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

// vLLM's `_postprocess_messages` (vllm/renderers/chat_utils/parse_chat_message.py): an assistant message's earlier tool
// calls become the mappings templates take, so each must be a function call (`type` left out means one).
function checkToolCallHistory(r: ChatCompletionRequest): void {
  for (const message of r.messages) {
    const calls = message.tool_calls
    if (message.role !== 'assistant' || !Array.isArray(calls)) continue
    for (const call of calls as unknown[]) {
      if (!isPlainObject(call))
        throw new BadRequestError('assistant tool_calls entries must be objects.', { param: 'tool_calls' })
      const type = 'type' in call ? call.type : 'function'
      if (type !== 'function' || !isPlainObject(call.function)) {
        throw new BadRequestError("chat completions only support assistant tool_calls of type 'function'.", {
          param: 'tool_calls',
        })
      }
    }
  }
}

/**
 * Applies the chat layer's rules to a request for a model: `continue_final_message` with `add_generation_prompt`
 * (default true, so leaving it out counts) is Hugging Face's error, an assistant's earlier tool call that is not a
 * function call is vLLM's, and a media part for a text-only model is vLLM's `{model} is not a multimodal model`.
 * Throws `BadRequestError`.
 */
export function checkMessages(r: ChatCompletionRequest, model: CatalogModel): void {
  checkToolCallHistory(r)
  if (r.continue_final_message === true && (r.add_generation_prompt ?? CHAT_DEFAULTS.add_generation_prompt)) {
    throw new BadRequestError(CONTINUE_WITH_GENERATION_PROMPT)
  }
  // vLLM names `model_config.model`, the served model's path, which the model card reports as `root`.
  if (!isMultimodal(model) && hasMediaPart(r)) {
    throw new BadRequestError(`${model.root ?? model.id} is not a multimodal model`)
  }
}
