import type { Context } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { releaseAfterResponse } from '#shared/http/rate-limit'
import { admit, chargeTokens, keyScope, type LimitCheck, projectModelScope } from '#shared/limits/limiter'
import type { CatalogModel } from '#shared/schemas/model'

/** Charges a finished (or aborted) completion's tokens to the windows whose `tpm` it counts against. */
export type TokenCharge = (tokens: number) => Promise<void>

/**
 * Admits a chat completion under the key's `tpm` and the model's per-project `rpm`, `tpm` and `concurrency`, or throws
 * 429. The model's slot is freed once the response ended. Resolves to the token charge, undefined when no `tpm`
 * applies; with no limit set this returns undefined at once (no I/O, no promise).
 */
export function admitCompletion(c: Context<AppEnv>, model: CatalogModel): Promise<TokenCharge | undefined> | undefined {
  const checks: LimitCheck[] = []
  const principal = c.get('auth')
  const keyTpm = principal.limits?.tpm
  if (keyTpm !== undefined) checks.push({ scope: keyScope(principal.keyId), tpm: keyTpm })
  if (model.rpm !== undefined || model.tpm !== undefined || model.concurrency !== undefined) {
    checks.push({
      scope: projectModelScope(model.id, c.get('project').id),
      rpm: model.rpm,
      tpm: model.tpm,
      concurrency: model.concurrency,
    })
  }
  if (checks.length === 0) return undefined
  return admit(checks).then((release) => {
    releaseAfterResponse(c, release)
    const scopes = checks.filter((check) => check.tpm !== undefined).map((check) => check.scope)
    return scopes.length === 0 ? undefined : (tokens: number) => chargeTokens(scopes, tokens)
  })
}
