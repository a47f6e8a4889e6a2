import type { AddressInfo } from 'node:net'
import dynalite from 'dynalite'

/** Starts an in-memory dynalite server on a free loopback port. */
export async function startDynalite() {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { endpoint: `http://127.0.0.1:${port}`, close }
}
