import { logger } from '#shared/logger'

type Entry<V> = { value: V; expires: number }

/** Loads a value; `background` is true for a refresh of a cached value that no request waits for. */
export type Loader<V> = (background: boolean) => Promise<V>

/** Settings of a `RefreshingCache`, read on every use so tests and composition roots may change them. */
export type RefreshingCacheOptions = {
  /** How long a loaded value is served, in ms; 0 disables caching. */
  ttlMs: () => number
  /** Upper bound on entries; the oldest is evicted first. */
  maxEntries: () => number
  /** What is cached, for the log line of a failed background refresh. */
  name: string
}

/**
 * A bounded in-memory cache of look-ups on the request path (API keys, the model catalog). Concurrent misses share one
 * load, and an entry in the last quarter of its life is refreshed in the background while requests keep getting the
 * cached value, so under steady traffic no request waits for a reload; an entry is never served past its expiry, so a
 * revoked key still stops working within one TTL.
 */
export class RefreshingCache<V> {
  readonly #entries = new Map<string, Entry<V>>()
  readonly #loading = new Map<string, Promise<V>>()
  readonly #options: RefreshingCacheOptions
  // Bumped by `clear()`, so a load that started before it cannot put back what was cleared.
  #generation = 0

  constructor(options: RefreshingCacheOptions) {
    this.#options = options
  }

  /**
   * The cached value of `key`, or the value `load` resolves to (cached for the TTL). `load` is told whether it runs
   * as a background refresh (no request waits for it), so it may send its reads as background work.
   */
  get(key: string, load: Loader<V>, now = Date.now()): Promise<V> {
    const value = this.peek(key, load, now)
    return value instanceof Promise ? value : Promise.resolve(value)
  }

  /**
   * As `get`, but a fresh cached value is returned as it is, not wrapped in a promise: on the request path every
   * look-up is a hit, and an extra promise per look-up is measurable there.
   */
  peek(key: string, load: Loader<V>, now = Date.now()): V | Promise<V> {
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.expires <= now) return this.#load(key, load, now, false)
    if (entry.expires - now < this.#options.ttlMs() / 4) {
      this.#load(key, load, now, true).catch((error: unknown) => {
        logger.warn(`background refresh of the ${this.#options.name} cache failed`, { error })
      })
    }
    return entry.value
  }

  /** Forgets every entry (tests, administration in the same process). */
  clear(): void {
    this.#generation++
    this.#entries.clear()
    this.#loading.clear()
  }

  #load(key: string, load: Loader<V>, now: number, background: boolean): Promise<V> {
    const pending = this.#loading.get(key)
    if (pending !== undefined) return pending
    const generation = this.#generation
    const loading = load(background)
      .then((value) => {
        if (generation === this.#generation) this.#set(key, value, now)
        return value
      })
      .finally(() => {
        if (this.#loading.get(key) === loading) this.#loading.delete(key)
      })
    this.#loading.set(key, loading)
    return loading
  }

  #set(key: string, value: V, now: number): void {
    const ttl = this.#options.ttlMs()
    if (ttl <= 0) return
    this.#entries.delete(key)
    if (this.#entries.size >= this.#options.maxEntries()) {
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(key, { value, expires: now + ttl })
  }
}
