import type { ChatBackend } from '#shared/inference/backend'
import type { BackendKind } from '#shared/schemas/model'

type BackendLoader = () => Promise<ChatBackend>

// Loaded lazily so a function bundles and initialises only the backend its models use.
const LOADERS: Record<BackendKind, BackendLoader> = {
  'openai-compatible': async () => (await import('#shared/inference/openai-compatible')).openAiCompatibleBackend,
  reference: async () => (await import('#shared/engine/reference-backend')).referenceBackend,
}

const loading = new Map<BackendKind, Promise<ChatBackend>>()
const ready = new Map<BackendKind, ChatBackend>()

/** The backend serving a kind of model, loaded once per process; once loaded, returned without a promise. */
export function backendFor(kind: BackendKind): ChatBackend | Promise<ChatBackend> {
  const backend = ready.get(kind)
  if (backend !== undefined) return backend
  let pending = loading.get(kind)
  if (pending === undefined) {
    pending = LOADERS[kind]().then((loaded) => {
      ready.set(kind, loaded)
      return loaded
    })
    // A failed load is not cached, so a transient import error does not stick.
    pending.catch(() => loading.delete(kind))
    loading.set(kind, pending)
  }
  return pending
}
