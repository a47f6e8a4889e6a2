import { topTokens } from '#shared/engine/sampler'
import { tokenBytes, tokenText } from '#shared/engine/tokenizer'

/** One logprob entry in OpenAI's chat format. */
export type LogprobEntry = {
  token: string
  logprob: number
  bytes: number[]
  top_logprobs: { token: string; logprob: number; bytes: number[] }[]
}

/** vLLM clamps -inf to -9999.0 in responses. */
export function clampLogprob(v: number): number {
  return v === Number.NEGATIVE_INFINITY || Number.isNaN(v) ? -9999 : v
}

// vLLM's sampler lists the sampled token, then the top k (vllm/v1/sample/sampler.py); the position's logprob dict
// keeps each token once, where it first came (vllm/logprobs.py `append_logprobs_for_next_position`), and serving
// shows its first k entries (`_get_top_logprobs`). So: the sampled token, then the top k without it, cut to k.
export function sampledFirst(raw: Float64Array, token: number, k: number): [number, number][] {
  if (k <= 0) return []
  const top = topTokens(raw, k)
  const at = top.findIndex(([t]) => t === token)
  if (at < 0) top.pop()
  else top.splice(at, 1)
  top.unshift([token, raw[token] as number])
  return top
}

/** The token as logprobs show it (`token_id:<id>` with `return_tokens_as_token_ids`). */
export function tokenLabel(id: number, asIds: boolean): string {
  return asIds ? `token_id:${id}` : tokenText(id)
}

const utf8 = new TextEncoder()

/**
 * One `top_logprobs` entry. vLLM's `_get_top_logprobs` takes its `bytes` from the label it shows, so with
 * `return_tokens_as_token_ids` they are the bytes of `token_id:<id>`; the main entry's stay the token's own.
 */
export function topEntry(id: number, logprob: number, asIds: boolean): LogprobEntry['top_logprobs'][number] {
  const token = tokenLabel(id, asIds)
  return { token, logprob: clampLogprob(logprob), bytes: asIds ? [...utf8.encode(token)] : tokenBytes(id) }
}
