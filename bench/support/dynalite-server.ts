import type { AddressInfo } from 'node:net'
import dynalite from 'dynalite'

// An in-memory dynalite in a process of its own, standing in for DynamoDB (a remote service in production) so the
// gateway's process does only the gateway's work. Prints `{port}` on stdout.
const store = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
store.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (store.address() as AddressInfo).port })}\n`)
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
