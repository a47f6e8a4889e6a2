import { BadRequestError } from '#shared/errors/http-error'
import { pyRepr } from '#shared/errors/inference-errors'
import { CHAT_DEFAULTS, type ChatCompletionRequest, type ContentPart } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

// What vLLM's chat layer refuses while it turns the messages into a prompt (raised while serving, so 400
// `BadRequestError`): content parts its parser cannot read, media parts for a text-only model, and Hugging Face's
// `apply_chat_template` arguments.

/** Hugging Face `apply_chat_template`'s message when both flags are set (vLLM reports it as a 400). */
export const CONTINUE_WITH_GENERATION_PROMPT =
  'continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead.'

// vLLM's chat parser (vllm/renderers/chat_utils/parse_chat_message_content.py `_parse_chat_message_content_part`,
// `MM_PARSER_MAP` in mm_parser_map.py): these part types are text, given to the template as `{"type": "text", …}`.
/** Content part types that are text, each with the key that holds its text. */
export const TEXT_PARTS: ReadonlyMap<string, string> = new Map([
  ['text', 'text'],
  ['input_text', 'text'],
  ['output_text', 'text'],
  ['refusal', 'refusal'],
  ['thinking', 'thinking'],
])

/** Content part types vLLM hands to the multimodal processor, with their modality. */
export const MEDIA_PARTS: ReadonlyMap<string, string> = new Map([
  ['image_url', 'image'],
  ['input_image', 'image'],
  ['image_embeds', 'image'],
  ['image_pil', 'image'],
  ['audio_url', 'audio'],
  ['input_audio', 'audio'],
  ['audio_embeds', 'audio'],
  ['video_url', 'video'],
  ['video_embeds', 'video'],
])

// The rest of `MM_PARSER_MAP`: `prompt_embeds` (a server flag decides) and `tool_reference` (passed to the template).
const SUPPORTED_PARTS = [...TEXT_PARTS.keys(), ...MEDIA_PARTS.keys(), 'prompt_embeds', 'tool_reference']
  .sort()
  .join(', ')

// A part without a type, or with a `uuid`, takes its type from the first of these keys it has
// (`_parse_chat_message_content_mm_part`).
const TYPE_KEYS = [
  'image_url',
  'image_pil',
  'image_embeds',
  'audio_embeds',
  'video_embeds',
  'prompt_embeds',
  'audio_url',
  'input_audio',
  'video_url',
  'tool_reference',
]

/** A content part's type as vLLM's chat parser reads it (a string part is text); throws its 400 when there is none. */
export function partType(part: ContentPart): string {
  if (typeof part === 'string') return 'text'
  const { type } = part
  if (type === undefined || type === null || (part.uuid !== undefined && part.uuid !== null)) {
    const key = TYPE_KEYS.find((k) => Object.hasOwn(part, k))
    if (key === undefined) throw new BadRequestError("Missing 'type' field in multimodal part.", { param: 'type' })
    return key
  }
  if (typeof type !== 'string') throw new BadRequestError("Invalid 'type' field in multimodal part.", { param: 'type' })
  return type
}

// Part by part in message order, as vLLM parses them, so the first offending part decides the error.
function checkParts(r: ChatCompletionRequest, model: CatalogModel): void {
  for (const message of r.messages) {
    const content = message.content
    if (!Array.isArray(content)) continue
    for (const part of content) {
      const type = partType(part)
      if (TEXT_PARTS.has(type) || type === 'prompt_embeds' || type === 'tool_reference') continue
      // OpenAI's `file` parts, which vLLM's parser does not read, go to upstream models: hosted APIs take them (a vLLM
      // upstream answers its own 400). The reference engine refuses them as vLLM does.
      if (type === 'file' && model.backend.kind === 'openai-compatible') continue
      if (!MEDIA_PARTS.has(type)) {
        throw new BadRequestError(
          `Unsupported chat content part type: ${pyRepr(type)}. Supported types: ${SUPPORTED_PARTS}.`,
          { param: 'type' },
        )
      }
      // vLLM names `model_config.model`, the served model's path, which the model card reports as `root`.
      if (!isMultimodal(model)) throw new BadRequestError(`${model.root ?? model.id} is not a multimodal model`)
    }
  }
}

/** Whether a catalog model takes media parts: as the catalog says, else upstream models do and reference ones do not. */
export function isMultimodal(model: CatalogModel): boolean {
  return model.multimodal ?? model.backend.kind === 'openai-compatible'
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
 * Applies the chat layer's rules to a request for a model, in vLLM's order: content parts as its parser reads them (a
 * missing, invalid or unknown type, and a media part for a text-only model, `{model} is not a multimodal model`), an
 * assistant's earlier tool call that is not a function call, then Hugging Face's `continue_final_message` with
 * `add_generation_prompt` (default true, so leaving it out counts). Throws `BadRequestError`.
 */
export function checkMessages(r: ChatCompletionRequest, model: CatalogModel): void {
  checkParts(r, model)
  checkToolCallHistory(r)
  if (r.continue_final_message === true && (r.add_generation_prompt ?? CHAT_DEFAULTS.add_generation_prompt)) {
    throw new BadRequestError(CONTINUE_WITH_GENERATION_PROMPT)
  }
}
