import { keyPart } from '#shared/db/key-part'
import { loadJson, type StoredJson } from '#shared/db/large-value'

// Feedback (docs/data-model.md): PK=FB#<project>#<id> SK=FB; the row's columns in `row_dump`, its payload in
// `payload_dump` (kept whole, split when large). Indexes, all with sort key <created_at>#<id>:
//   GSI1 FBT#<project>                   time window (stats, payload_schema, unfiltered query)
//   GSI2 FBTY#<project>#<feedback_type>  one feedback type (stats with feedback_type, query by type)
//   GSI3 FBREF#<project>#<weave_ref>     feedback of one call or object (query by weave_ref)
//   GSI4 FBTRIG#<project>#<trigger ref without its version>   feedback of one monitor (stats by exact trigger_ref)
// Retried creates without a client id: PK=FBRETRY#<project>#<retry key> SK=FBRETRY holds the id first chosen.
// `call_live: true` (never in `row_dump`, so never in an answer): when the row was written, the call its weave_ref
// names in the same project had a start part without `deleted_at`. Read only by call counts (`readProjectFeedback`,
// through GSI1, which projects ALL).

/** The key of a feedback row's item. */
export const feedbackKey = (project: string, id: string) => ({ PK: `FB#${keyPart(project)}#${keyPart(id)}`, SK: 'FB' })
/** Where a row's payload chunks live (large-value), beside the row. */
export const payloadOwner = (pk: string) => ({ pk, skPrefix: 'PAYLOAD' })

/** The payload's JSON text of a stored row item, its chunks read when it was split. */
export const payloadText = (item: Record<string, unknown>) =>
  loadJson(payloadOwner(String(item.PK)), item.payload as StoredJson)

/** A trigger ref without its `:<version>` (`weave:///e/p/object/mon:abc` → `weave:///e/p/object/mon`). */
export function triggerBase(ref: string): string {
  const colon = ref.lastIndexOf(':')
  return colon > ref.lastIndexOf('/') && colon > 'weave:'.length ? ref.slice(0, colon) : ref
}

/** Which stored listing a read uses. */
export type FeedbackSource =
  | { kind: 'project' }
  | { kind: 'type'; feedbackType: string }
  | { kind: 'ref'; weaveRef: string }
  | { kind: 'trigger'; base: string }

/** The index, partition key and key attribute names of a listing. */
export function indexFor(
  project: string,
  source: FeedbackSource,
): { IndexName: string; pk: string; pkName: string; skName: string } {
  if (source.kind === 'type')
    return {
      IndexName: 'GSI2',
      pk: `FBTY#${keyPart(project)}#${keyPart(source.feedbackType)}`,
      pkName: 'GSI2PK',
      skName: 'GSI2SK',
    }
  if (source.kind === 'ref')
    return {
      IndexName: 'GSI3',
      pk: `FBREF#${keyPart(project)}#${keyPart(source.weaveRef)}`,
      pkName: 'GSI3PK',
      skName: 'GSI3SK',
    }
  if (source.kind === 'trigger')
    return {
      IndexName: 'GSI4',
      pk: `FBTRIG#${keyPart(project)}#${keyPart(source.base)}`,
      pkName: 'GSI4PK',
      skName: 'GSI4SK',
    }
  return { IndexName: 'GSI1', pk: `FBT#${keyPart(project)}`, pkName: 'GSI1PK', skName: 'GSI1SK' }
}
