/** The call a weave ref names in `project` (`weave:///<project>/call/<id>` → id); undefined for any other ref. */
export function callIdOfRef(project: string, weaveRef: string): string | undefined {
  const prefix = `weave:///${project}/call/`
  if (!weaveRef.startsWith(prefix)) return undefined
  const id = weaveRef.slice(prefix.length)
  return id === '' || id.includes('/') ? undefined : id
}

/**
 * The `<entity>/<project>` a `weave:///` ref names, or undefined for any other string. Weave's adapter converts every
 * ref of a write to its internal project id, which needs access to that project: a ref into an entity the caller does
 * not belong to is refused there, and Loom refuses it with the same 403 as reading it (`refs/read_batch`).
 */
export function projectOfRef(ref: string | null | undefined): string | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('weave:///')) return undefined
  const [entity, project] = ref.slice('weave:///'.length).split('/', 2)
  return entity && project ? `${entity}/${project}` : undefined
}
