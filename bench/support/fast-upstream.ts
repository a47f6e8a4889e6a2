import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

// A fast OpenAI/vLLM-compatible upstream for the gateway benchmark: fixed answers, no parsing beyond draining the
// body, so the numbers measure the gateways. Prints its port on stdout.
const TOKENS = ['Hello', ' from', ' the', ' fast', ' upstream', '.', ' It', ' answers', ' quickly', '.']
const created = Math.floor(Date.now() / 1000)
const usage = { prompt_tokens: 12, completion_tokens: TOKENS.length, total_tokens: 12 + TOKENS.length }
const message = {
  role: 'assistant',
  content: TOKENS.join(''),
  refusal: null,
  annotations: null,
  audio: null,
  function_call: null,
  tool_calls: [],
  reasoning: null,
}
const JSON_BODY = JSON.stringify({
  id: 'chatcmpl-upstream',
  object: 'chat.completion',
  created,
  model: 'bench/fast',
  choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop', stop_reason: null, token_ids: null }],
  service_tier: null,
  system_fingerprint: null,
  usage: { ...usage, prompt_tokens_details: null },
  prompt_logprobs: null,
  prompt_token_ids: null,
  kv_transfer_params: null,
})
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created, model: 'bench/fast', choices, ...extra })}\n\n`
const ROLE = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], {
  prompt_token_ids: null,
})
const REST =
  TOKENS.map((t, i) =>
    chunk([
      i === TOKENS.length - 1
        ? { index: 0, delta: { content: t }, logprobs: null, finish_reason: 'stop', stop_reason: null }
        : { index: 0, delta: { content: t }, logprobs: null, finish_reason: null },
    ]),
  ).join('') +
  chunk([], { usage }) +
  'data: [DONE]\n\n'

const server = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (piece: string) => {
    body += piece
  })
  req.on('end', () => {
    if (!body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JSON_BODY) })
      res.end(JSON_BODY)
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write(ROLE)
    setImmediate(() => res.end(REST))
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`)
})
