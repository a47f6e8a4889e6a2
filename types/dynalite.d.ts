// Minimal typings for dynalite 4 (the package ships none).
declare module 'dynalite' {
  import type { Server } from 'node:http'

  type DynaliteOptions = {
    path?: string
    createTableMs?: number
    deleteTableMs?: number
    updateTableMs?: number
    maxItemSizeKb?: number
    ssl?: boolean
  }

  function dynalite(options?: DynaliteOptions): Server
  export = dynalite
}
