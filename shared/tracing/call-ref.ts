/** The call a weave ref names in `project` (`weave:///<project>/call/<id>` → id); undefined for any other ref. */
export function callIdOfRef(project: string, weaveRef: string): string | undefined {
  const prefix = `weave:///${project}/call/`
  if (!weaveRef.startsWith(prefix)) return undefined
  const id = weaveRef.slice(prefix.length)
  return id === '' || id.includes('/') ? undefined : id
}
