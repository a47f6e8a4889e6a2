// The API key lives in this tab's sessionStorage only (never a URL, a cookie or persistent storage): it is gone when the tab
// closes, and other tabs and sites cannot read it.

const KEY = 'loom.console.key'
const PROJECT = 'loom.console.project'

/** The signed-in key and chosen project, if any. */
export type Session = { key: string; project: string | undefined }

function storage(): Storage | undefined {
  try {
    return globalThis.sessionStorage
  } catch {
    return undefined
  }
}

/** The current session from sessionStorage, or undefined when signed out. */
export function loadSession(): Session | undefined {
  const key = storage()?.getItem(KEY) ?? ''
  if (key === '') return undefined
  const project = storage()?.getItem(PROJECT) ?? ''
  return { key, project: project === '' ? undefined : project }
}

/** Stores the key (and project) for this tab. */
export function saveSession(session: Session): void {
  storage()?.setItem(KEY, session.key)
  if (session.project === undefined) storage()?.removeItem(PROJECT)
  else storage()?.setItem(PROJECT, session.project)
}

/** Forgets the key and project. */
export function clearSession(): void {
  storage()?.removeItem(KEY)
  storage()?.removeItem(PROJECT)
}
