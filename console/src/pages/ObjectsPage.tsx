import { useEffect, useState } from 'preact/hooks'
import { Empty, ErrorBox, PageHeader, SendDataHint } from '../components/common'
import { JsonViewer } from '../components/JsonViewer'
import { TableRows } from '../components/TableRows'
import type { Api } from '../lib/api'
import { browserTimeZone, formatDate } from '../lib/format'
import { showRoute } from '../lib/navigate'
import { chosenRowsOffset, chosenVersion, objectViewParams } from '../lib/page-views'
import { tableRefsOf } from '../lib/refs'
import { routeHash } from '../lib/route'

// Dates are shown in the browser's time zone, named in the column headings (as on Traces).
const TIME_ZONE = browserTimeZone()

type Obj = {
  object_id: string
  digest: string
  version_index: number
  is_latest: 0 | 1
  kind: 'op' | 'object'
  base_object_class: string | null
  created_at: string
  size_bytes: number | null
  tags: string[] | null
  aliases: string[] | null
  val?: unknown
}

function Labels({ obj }: { obj: Obj }) {
  return (
    <>
      {(obj.aliases ?? []).map((a) => (
        <span key={`a-${a}`} class="pill alias">
          {a}
        </span>
      ))}
      {(obj.tags ?? []).map((t) => (
        <span key={`t-${t}`} class="pill">
          {t}
        </span>
      ))}
    </>
  )
}

/**
 * A click that follows the link in this tab: not one that opens it elsewhere (a modifier key, another button), which a
 * link to the version already shown must still allow.
 */
function plainClick(e: MouseEvent): boolean {
  return e.button === 0 && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.altKey
}

function Versions({
  api,
  project,
  objectId,
  params,
}: {
  api: Api
  project: string
  objectId: string
  params: URLSearchParams
}) {
  const [versions, setVersions] = useState<Obj[] | undefined>()
  // The link's version when the object has it, else the latest; none is read before the versions are listed.
  const digest = versions === undefined ? undefined : chosenVersion(params, versions)
  // Each version is a link to it at its rows' first page, so following one is a new history entry (Back returns to the
  // version shown before) and it can be copied or opened in a new tab. The rows' page is the query too (`rows`): paging
  // replaces the entry, as on Traces and Feedback, and keeps the version the link names (none: the latest).
  const rows = chosenRowsOffset(params)
  const linked = params.get('digest') === digest ? digest : undefined
  const versionHash = (v: string) => routeHash('objects', [objectId], objectViewParams(v, 0))
  const page = (offset: number) =>
    showRoute(routeHash('objects', [objectId], objectViewParams(linked, offset)), 'replace')
  const [value, setValue] = useState<Obj | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setVersions(undefined)
    setError(undefined)
    api
      .post<{ objs: Obj[] }>(
        'objs/query',
        {
          project_id: project,
          filter: { object_ids: [objectId] },
          metadata_only: true,
          include_tags_and_aliases: true,
          sort_by: [{ field: 'created_at', direction: 'desc' }],
        },
        abort.signal,
      )
      .then((r) => setVersions(r.objs))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, objectId])
  useEffect(() => {
    if (digest === undefined) return
    const abort = new AbortController()
    setValue(undefined)
    api
      .post<{ obj: Obj }>(
        'obj/read',
        { project_id: project, object_id: objectId, digest, include_tags_and_aliases: true },
        abort.signal,
      )
      .then((r) => {
        setValue(r.obj)
        setError(undefined)
      })
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, objectId, digest])
  return (
    <section aria-label={`Object ${objectId}`} data-testid="object-detail" data-object-id={objectId}>
      <h2>{objectId}</h2>
      <ErrorBox error={error} testId="object-error" />
      {versions !== undefined && versions.length === 0 ? (
        <Empty testId="object-not-found">
          <p>
            Object not found: no versions of {objectId} in {project}. It may have been deleted.
          </p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="object-versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col" class="wraps" data-testid="object-created-column">
                  Created ({TIME_ZONE})
                </th>
                <th scope="col">Tags and aliases</th>
                <th scope="col">Digest</th>
              </tr>
            </thead>
            <tbody>
              {(versions ?? []).map((v) => (
                <tr
                  key={v.digest}
                  data-testid="object-version-row"
                  data-digest={v.digest}
                  class={v.digest === digest ? 'selected' : ''}
                >
                  <td>
                    <a
                      href={versionHash(v.digest)}
                      aria-current={v.digest === digest ? 'true' : undefined}
                      onClick={(e) => {
                        // The version shown: following its link again would add the same entry (or pin the latest).
                        if (v.digest === digest && plainClick(e)) e.preventDefault()
                      }}
                    >
                      v{v.version_index}
                    </a>
                  </td>
                  <td class="date">{formatDate(v.created_at)}</td>
                  <td>
                    <Labels obj={v} />
                  </td>
                  <td class="mono">{v.digest.slice(0, 12)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {value !== undefined && (
        <>
          <h3>Value of v{value.version_index}</h3>
          <JsonViewer
            value={value.val}
            label={`Value of ${objectId} v${value.version_index}`}
            testId="json-object-value"
          />
          {/* A table the value refers to (a Dataset's rows) is shown as rows, not only as its ref, at the route's page
          (`rows`; a version's link starts at the first). */}
          {tableRefsOf(value.val).map((t) => (
            <TableRows
              key={`${t.key} ${t.digest}`}
              api={api}
              project={t.project}
              digest={t.digest}
              field={t.key}
              offset={rows}
              onPage={page}
            />
          ))}
        </>
      )}
    </section>
  )
}

/**
 * Objects: the project's objects (latest versions), one object's versions with tags and aliases, a version's value and
 * the rows of the tables it refers to (a Dataset's `rows`, `components/TableRows.tsx`). The object is the route's path,
 * its version and the rows' page the query (`#/objects/<object id>?digest=<digest>&rows=50`, `lib/page-views.ts`).
 */
export function ObjectsPage({
  api,
  project,
  objectId,
  params,
}: {
  api: Api
  project: string
  objectId: string | undefined
  params: URLSearchParams
}) {
  const [objects, setObjects] = useState<Obj[] | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setError(undefined)
    api
      .post<{ objs: Obj[] }>(
        'objs/query',
        {
          project_id: project,
          filter: { latest_only: true },
          metadata_only: true,
          include_tags_and_aliases: true,
          sort_by: [{ field: 'created_at', direction: 'desc' }],
        },
        abort.signal,
      )
      .then((r) => setObjects(r.objs))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project])
  const current = objectId ?? objects?.[0]?.object_id
  return (
    <div data-testid="page-objects">
      <PageHeader title="Objects" />
      <ErrorBox error={error} testId="objects-error" />
      {objects !== undefined && objects.length === 0 ? (
        <Empty testId="objects-empty">
          <p>No objects in {project}. Publish one with the Weave SDK (`weave.publish(value, name="...")`):</p>
          <SendDataHint project={project} />
        </Empty>
      ) : (
        <div class="split">
          <div class="table-wrap">
            <table data-testid="objects-table">
              <thead>
                <tr>
                  <th scope="col">Object</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Latest version</th>
                  <th scope="col" class="wraps" data-testid="objects-created-column">
                    Created ({TIME_ZONE})
                  </th>
                </tr>
              </thead>
              <tbody>
                {(objects ?? []).map((o) => (
                  <tr
                    key={o.object_id}
                    data-testid="objects-row"
                    data-object-id={o.object_id}
                    class={o.object_id === current ? 'selected' : ''}
                  >
                    <td>
                      <a
                        href={routeHash('objects', [o.object_id])}
                        aria-current={o.object_id === current ? 'true' : undefined}
                      >
                        {o.object_id}
                      </a>
                    </td>
                    <td>{o.base_object_class ?? o.kind}</td>
                    <td>v{o.version_index}</td>
                    <td class="date" data-testid="objects-created">
                      {formatDate(o.created_at)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {/* Keyed by object: a new object starts with no chosen version, so its first read never asks for the previous
          object's digest (a 404). Not shown while the list failed: its own objs/query would fail the same way, and the
          page would show the same alert twice. */}
          {current !== undefined && error === undefined && (
            <Versions key={current} api={api} project={project} objectId={current} params={params} />
          )}
        </div>
      )}
    </div>
  )
}
