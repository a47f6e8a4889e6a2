import { useState } from 'preact/hooks'

const MAX_STRING = 400
const MAX_ENTRIES = 100

type NodeProps = { name: string | null; value: unknown; depth: number; openDepth: number }

function Scalar({ value }: { value: unknown }) {
  const [full, setFull] = useState(false)
  if (typeof value === 'string') {
    const long = value.length > MAX_STRING
    const shown = long && !full ? `${value.slice(0, MAX_STRING)}…` : value
    return (
      <span class="json-string">
        "{shown}"
        {long && (
          <button type="button" class="link" onClick={() => setFull(!full)}>
            {full ? 'show less' : `show more (${value.length.toLocaleString('en-US')} characters)`}
          </button>
        )}
      </span>
    )
  }
  if (value === null || value === undefined) return <span class="json-null">null</span>
  if (typeof value === 'number') return <span class="json-number">{String(value)}</span>
  if (typeof value === 'boolean') return <span class="json-bool">{String(value)}</span>
  return <span>{String(value)}</span>
}

function JsonNode({ name, value, depth, openDepth }: NodeProps) {
  const [open, setOpen] = useState(depth < openDepth)
  const [limit, setLimit] = useState(MAX_ENTRIES)
  const label = name === null ? null : <span class="json-key">{name}: </span>
  if (typeof value !== 'object' || value === null) {
    return (
      <li>
        {label}
        <Scalar value={value} />
      </li>
    )
  }
  const array = Array.isArray(value)
  const entries: [string, unknown][] = array ? value.map((v, i) => [String(i), v]) : Object.entries(value)
  const summary = array ? `[${entries.length}]` : `{${entries.length}}`
  return (
    <li>
      <button type="button" class="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span aria-hidden="true">{open ? '▾' : '▸'}</span> {label}
        <span class="muted">{summary}</span>
      </button>
      {open && (
        <ul class="json-children">
          {entries.slice(0, limit).map(([k, v]) => (
            <JsonNode key={k} name={k} value={v} depth={depth + 1} openDepth={openDepth} />
          ))}
          {entries.length > limit && (
            <li>
              <button type="button" class="link" onClick={() => setLimit(limit + MAX_ENTRIES)}>
                show more ({(entries.length - limit).toLocaleString('en-US')} more)
              </button>
            </li>
          )}
        </ul>
      )}
    </li>
  )
}

/**
 * A collapsible JSON tree. Every key and value is rendered as text (never as HTML); strings over 400 characters and
 * containers over 100 entries are cut with a "show more" button.
 */
export function JsonViewer({
  value,
  label,
  testId,
  openDepth = 2,
}: {
  value: unknown
  label: string
  testId: string
  openDepth?: number
}) {
  return (
    <section class="json" aria-label={label} data-testid={testId}>
      <ul class="json-root">
        <JsonNode name={null} value={value} depth={0} openDepth={openDepth} />
      </ul>
    </section>
  )
}
