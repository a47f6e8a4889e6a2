import { getAlias } from '#shared/db/obj-label-repository'
import { findVersionsByIndex, getObjVersion, type ObjVersionRecord } from '#shared/db/obj-repository'
import type { ObjOut, ObjVersion } from '#shared/schemas/obj'
import { isContentHash } from '#shared/tracing/digest'
import { parseStoredJson } from '#shared/tracing/json-exact'
import { parsePythonInt } from '#shared/tracing/py-number'

/** The version index a `v<N>` reference names, or undefined when `digest` is not version-like. */
export function versionLikeIndex(digest: string): number | undefined {
  return digest.startsWith('v') ? parsePythonInt(digest.slice(1)) : undefined
}

/**
 * Resolves what `obj/read` calls a digest (docs/tracing.md §8.4): `latest`, `v<N>`, an alias, else a content digest.
 * Deleted versions are returned too (the caller answers them with 404 + `deleted_at`); unfinished ones are not.
 */
export async function resolveObjVersion(
  project: string,
  objectId: string,
  digest: string,
  withVal: boolean,
): Promise<ObjVersionRecord | undefined> {
  let target: string | undefined = digest
  if (digest === 'latest') target = await getAlias(project, objectId, 'latest')
  else {
    const index = versionLikeIndex(digest)
    if (index !== undefined) {
      if (index < 0) return undefined
      const found = await findVersionsByIndex(project, objectId, index)
      const chosen = found.find((v) => !v.deleted_at) ?? found[0]
      target = chosen?.digest
    } else if (!isContentHash(digest)) {
      target = (await getAlias(project, objectId, digest)) ?? digest
    }
  }
  if (target === undefined) return undefined
  const record = await getObjVersion(project, objectId, target, withVal)
  return record?.version.version_index === undefined ? undefined : record
}

/**
 * A version's value as the API answers it: `{}` when read without it (`metadata_only`). Values stored with exact
 * numbers parse to the `PyFloat`/`PyInt` wrappers (answer them with `jsonExactResponse`); every other value, and every
 * one stored before the flag existed, takes the faster `JSON.parse`.
 */
export function recordVal(record: ObjVersionRecord): unknown {
  return record.valText === undefined ? {} : parseStoredJson(record.valText, record.version.val_exact === true)
}

/** Builds the API's `ObjSchema` from a stored version. */
export function toObjOut(
  v: ObjVersion,
  val: unknown,
  opts: { isLatest: boolean; sizeBytes?: boolean; labels?: { tags: string[]; aliases: string[] } },
): ObjOut {
  return {
    project_id: v.project_id,
    object_id: v.object_id,
    created_at: v.created_at,
    deleted_at: v.deleted_at ?? null,
    digest: v.digest,
    version_index: v.version_index ?? 0,
    is_latest: opts.isLatest ? 1 : 0,
    kind: v.kind,
    base_object_class: v.base_object_class,
    leaf_object_class: v.leaf_object_class,
    val,
    wb_user_id: v.wb_user_id ?? null,
    size_bytes: opts.sizeBytes ? v.size_bytes : null,
    tags: opts.labels ? opts.labels.tags : null,
    aliases: opts.labels ? opts.labels.aliases : null,
  }
}

/** Tags of a version (sorted) and the aliases naming it, `latest` included when it is the latest. */
export function labelsOf(
  digest: string,
  labels: { aliases: { alias: string; digest: string }[]; tags: Map<string, string[]> },
): { tags: string[]; aliases: string[] } {
  const aliases = labels.aliases.filter((a) => a.digest === digest).map((a) => a.alias)
  return { tags: [...(labels.tags.get(digest) ?? [])].sort(), aliases: aliases.sort() }
}
