import { Agent, createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { gracefulCloser } from '../../scripts/local/graceful-close.js'

type Answer = { status: number; connection: string | undefined; body: string } | { error: string }

function get(port: number, agent: Agent): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', path: '/', agent }, (res: IncomingMessage) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }))
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    req.end()
  })
}

type Held = { res: ServerResponse }

/** A server whose requests wait in `held` until the test answers them. */
async function holdingServer(): Promise<{ server: Server; port: number; held: Held[]; arrived: () => Promise<void> }> {
  const held: Held[] = []
  let signal: () => void = () => {}
  const server = createServer((_req, res) => {
    held.push({ res })
    signal()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const arrived = () =>
    new Promise<void>((resolve) => {
      signal = resolve
    })
  return { server, port: (server.address() as AddressInfo).port, held, arrived }
}

const agents: Agent[] = []
afterEach(() => {
  for (const agent of agents.splice(0)) agent.destroy()
})

describe('gracefulCloser', () => {
  it('answers the request in flight with Connection: close and stops, so a keep-alive client cannot keep it serving', async () => {
    // Prepare: a keep-alive client with a request in flight when the close begins
    const { server, port, held, arrived } = await holdingServer()
    const closer = gracefulCloser(server)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    agents.push(agent)
    const received = arrived()
    const inFlight = get(port, agent)
    await received

    // Act: the close begins, then the request in flight is answered, then the client sends its next one
    const closing = closer.close(60_000)
    held[0]?.res.end('answered')
    const first = await inFlight
    const next = await get(port, agent)

    // Assess: the answer closed its connection, the server stopped without cutting anything, the next request found
    // no server
    expect(first).toEqual({ status: 200, connection: 'close', body: 'answered' })
    expect(await closing).toEqual({ cut: false })
    expect(next).toEqual({ error: 'ECONNREFUSED' })
  })

  it('cuts a connection whose response never ends once the grace period is over', async () => {
    // Prepare: a response started and never finished (a stream that does not end)
    const { server, port, held, arrived } = await holdingServer()
    const closer = gracefulCloser(server)
    const agent = new Agent({ keepAlive: true })
    agents.push(agent)
    const received = arrived()
    const pending = get(port, agent)
    await received
    held[0]?.res.write('partial')

    // Act
    const closing = await closer.close(50)

    // Assess
    expect(closing).toEqual({ cut: true })
    expect(await pending).toEqual({ error: 'ECONNRESET' })
  })
})
