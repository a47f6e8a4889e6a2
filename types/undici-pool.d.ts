// undici's Pool by its own module: importing the package root bundles every dispatcher, fetch and WebSocket too.
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici'

  const PoolClass: typeof Pool
  export = PoolClass
}
