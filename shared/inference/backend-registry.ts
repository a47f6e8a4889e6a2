import type { ChatBackend } from '#shared/inference/backend'
import type { BackendKind } from '#shared/schemas/model'

type BackendLoader = () => Promise<ChatBackend>

// Loaded lazily so a function bundles and initialises only the backend its models use.
const LOADERS: Record<BackendKind, BackendLoader> = {
  'openai-compatible': async () => (await import('#shared/inference/openai-compatible')).openAiCompatibleBackend,
  reference: async () => (await import('#shared/engine/reference-backend')).referenceBackend,
}

const loaded = new Map<BackendKind, Promise<ChatBackend>>()

/** The backend serving a kind of model, loaded once per process. */
export function backendFor(kind: BackendKind): Promise<ChatBackend> {
  let backend = loaded.get(kind)
  if (backend === undefined) {
    backend = LOADERS[kind]()
    // A failed load is not cached, so a transient import error does not stick.
    backend.catch(() => loaded.delete(kind))
    loaded.set(kind, backend)
  }
  return backend
}
