/** Splits an SSE body into its events' `data:` payloads (comments kept as `:`-prefixed entries). */
export function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => (e.startsWith(':') ? e : e.replace(/^data: /, '')))
}

/** The JSON chunks of an SSE body, without comments and `[DONE]`. */
export function sseChunks(text: string): Record<string, unknown>[] {
  return sseEvents(text)
    .filter((e) => !e.startsWith(':') && e !== '[DONE]')
    .map((e) => JSON.parse(e) as Record<string, unknown>)
}
