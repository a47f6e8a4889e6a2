import { putIfAbsent } from '#shared/db/conditional-write'

/** Claims a one-time marker (`MARKER#<name>`); true for exactly one caller, however often or concurrently it runs. */
export async function claimMarker(name: string, at: string): Promise<boolean> {
  return (await putIfAbsent({ PK: `MARKER#${name}`, SK: 'MARKER', claimedAt: at })) === 'written'
}
