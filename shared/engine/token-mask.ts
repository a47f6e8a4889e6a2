import type { Matcher, MatchState } from '#shared/engine/grammar/matcher'
import type { EngineParams } from '#shared/engine/params'
import { EOS_TOKEN_ID, VOCAB_SIZE } from '#shared/engine/tokenizer'

/** A mask that allows `token` alone. */
export function only(token: number): Uint8Array {
  const mask = new Uint8Array(VOCAB_SIZE)
  mask[token] = 1
  return mask
}

/**
 * The request's masks (`allowed_token_ids`, `bad_words`, `min_tokens`) narrowing `base`, vLLM's logits processors,
 * for a choice that has generated `output`; `constrained` says the grammar applies now (it holds `min_tokens` back
 * itself, in `grammarMask`).
 */
export function requestMask(
  params: EngineParams,
  output: readonly number[],
  constrained: boolean,
  base: Uint8Array | undefined,
): Uint8Array | undefined {
  let mask = base
  // Request masks narrow the choice only while something stays allowed: an empty mask would leave nothing to sample.
  const restrict = (keep: (t: number) => boolean) => {
    const next = mask ? Uint8Array.from(mask) : new Uint8Array(VOCAB_SIZE).fill(1)
    let any = false
    for (let t = 0; t < VOCAB_SIZE; t++) {
      if (next[t] === 1 && !keep(t)) next[t] = 0
      if (next[t] === 1) any = true
    }
    if (any) mask = next
  }
  if (params.allowedTokenIds) restrict((t) => params.allowedTokenIds?.has(t) === true)
  for (const word of params.badWords) {
    const prefix = word.slice(0, -1)
    const tail = output.slice(output.length - prefix.length)
    if (prefix.length <= output.length && prefix.every((t, i) => tail[i] === t)) {
      restrict((t) => t !== word[word.length - 1])
    }
  }
  if (output.length < params.minTokens && !constrained) {
    restrict((t) => t !== EOS_TOKEN_ID && !params.stopTokenIds.includes(t))
  }
  return mask
}

/**
 * The grammar's mask with budget forcing: a byte is allowed only if the grammar can still be completed, and
 * `<|im_end|>` emitted, within the `remaining` tokens; when even that is impossible the shortest completions are
 * preferred. `held` is `min_tokens` still holding EOS back.
 */
export function grammarMask(matcher: Matcher, state: MatchState, remaining: number, held: boolean): Uint8Array {
  const mask = new Uint8Array(VOCAB_SIZE)
  const successors = matcher.successors(state)
  let fits = false
  for (const [b, next] of successors) {
    if (next.dist <= remaining - 2) {
      mask[b] = 1
      fits = true
    }
  }
  // min_tokens holds EOS back while the grammar can go on; the constraint wins when it cannot.
  const early = held && fits
  if (matcher.accepting(state) && !early) mask[EOS_TOKEN_ID] = 1
  else if (!fits && !matcher.accepting(state)) {
    const best = Math.min(...successors.map(([, n]) => n.dist))
    for (const [b, next] of successors) if (next.dist === best) mask[b] = 1
  }
  return mask
}
