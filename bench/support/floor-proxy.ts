import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool } from 'undici'

// The gateway benchmark's floor: the smallest honest Node proxy for the same traffic. A `node:http` server that reads
// the request body, forwards it to the upstream through an undici keep-alive pool (the same client library Loom uses)
// and pipes the answer back, streamed or not: no validation, no auth, no metering, no tracing. Whatever Loom spends
// beyond this per request is the price of its rules. Argument: the upstream base URL (`http://host:port/v1`). Prints
// `{port}` on stdout.
const [upstream] = process.argv.slice(2)
if (upstream === undefined) throw new Error('usage: floor-proxy.ts <upstream base URL>')
const base = new URL(upstream)
const pool = new Pool(base.origin, { connections: 256, pipelining: 1 })
const prefix = base.pathname.replace(/\/$/, '')

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    // The client's path below /v1 goes to the same path below the upstream's base.
    const path = `${prefix}${(req.url ?? '/').replace(/^\/v1/, '')}`
    pool
      .request({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      })
      .then(({ statusCode, headers, body }) => {
        const type = headers['content-type']
        res.writeHead(statusCode, type === undefined ? {} : { 'content-type': type })
        body.pipe(res)
      })
      .catch((error: Error) => {
        res.writeHead(502, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: error.message } }))
      })
  })
})
server.keepAliveTimeout = 65_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
