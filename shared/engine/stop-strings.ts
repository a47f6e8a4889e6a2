// Stop strings as vLLM applies them to a choice's decoded text (its StopChecker and the detokenizer's hold-back,
// docs/reference-engine.md): lengths are Python's, in code points, and released text never splits a character.

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}

// Python's len: a surrogate pair is one character, a lone surrogate one too.
function codePointLength(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++, n++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) i++
  }
  return n
}

/**
 * How many characters (code points) of a streamed choice's text are held back while a stop string might still match:
 * max(len(stop)) - 1, as vLLM's detokenizer holds them, and none when the stop string is sent anyway.
 */
export function stopHoldBack(stops: readonly string[], includeStopStr: boolean): number {
  if (includeStopStr) return 0
  return Math.max(0, Math.max(0, ...stops.map(codePointLength)) - 1)
}

/**
 * vLLM's `check_stop_strings`: the first stop string in list order found in the window wins, even when another matches
 * earlier in the text; the window is the text added since `before` plus len(stop) - 1 before it, so only matches that
 * include new text count. The text cut at the match (keeping the stop string with `includeStopStr`), or undefined.
 */
export function matchStop(
  content: string,
  before: number,
  stops: readonly string[],
  includeStopStr: boolean,
): { content: string; stop: string } | undefined {
  for (const stop of stops) {
    const at = content.indexOf(stop, Math.max(0, before - stop.length + 1))
    if (at >= 0) return { content: content.slice(0, at + (includeStopStr ? stop.length : 0)), stop }
  }
  return undefined
}

/**
 * Where the held-back tail of `content` starts: `holdBack` code points from its end, so a released piece never ends
 * between the two halves of a surrogate pair (JSON would carry a lone surrogate, and Python clients would decode one;
 * vLLM's text is code points and never splits a character).
 */
export function heldFrom(content: string, holdBack: number): number {
  let at = content.length
  for (let n = 0; n < holdBack && at > 0; n++) {
    const pair = isLowSurrogate(content.charCodeAt(at - 1)) && isHighSurrogate(content.charCodeAt(at - 2))
    at -= pair ? 2 : 1
  }
  return at
}
