import { useEffect, useRef, useState } from 'preact/hooks'
import type { Call } from '../lib/calls'
import { callLatency, callName, callStatus } from '../lib/calls'
import { formatDuration } from '../lib/format'
import { barOf, type TreeRow } from '../lib/tree'

const ROW_HEIGHT = 28
const OVERSCAN = 12

type Props = {
  rows: TreeRow<Call>[]
  bounds: { start: number; end: number }
  now: number
  selected: string | undefined
  onSelect: (id: string) => void
  onToggle: (id: string) => void
}

/**
 * The call tree with a waterfall bar per call, virtualised: only the rows in view (plus a margin) are in the DOM, so
 * a 10,000-call trace scrolls as smoothly as a 10-call one. Every call is a button; on one, Up/Down/Home/End move the
 * selection and Right/Left expand and collapse.
 */
export function CallTree({ rows, bounds, now, selected, onSelect, onToggle }: Props) {
  const scroller = useRef<HTMLElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [height, setHeight] = useState(480)
  useEffect(() => {
    const el = scroller.current
    if (el === null) return
    const resize = new ResizeObserver(() => setHeight(el.clientHeight))
    resize.observe(el)
    return () => resize.disconnect()
  }, [])
  // Keep the selected row in view when it changes (keyboard navigation, opening a call from the table).
  useEffect(() => {
    const el = scroller.current
    const index = rows.findIndex((r) => r.node.call.id === selected)
    if (el === null || index < 0) return
    const top = index * ROW_HEIGHT
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight
  }, [selected, rows])

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN)
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN)
  const slice = rows.slice(first, last)

  function onKeyDown(e: KeyboardEvent) {
    const index = rows.findIndex((r) => r.node.call.id === selected)
    const move = (to: number) => {
      const row = rows[Math.max(0, Math.min(rows.length - 1, to))]
      e.preventDefault()
      if (row === undefined) return
      onSelect(row.node.call.id)
      // The row may only exist after the next render (it scrolls into the rendered window first).
      requestAnimationFrame(() =>
        requestAnimationFrame(() =>
          scroller.current
            ?.querySelector<HTMLButtonElement>(`[data-call-id="${CSS.escape(row.node.call.id)}"] .tree-name`)
            ?.focus(),
        ),
      )
    }
    if (e.key === 'ArrowDown') move(index + 1)
    else if (e.key === 'ArrowUp') move(index - 1)
    else if (e.key === 'Home') move(0)
    else if (e.key === 'End') move(rows.length - 1)
    else if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && index >= 0) {
      const row = rows[index]
      if (row !== undefined && row.node.children.length > 0 && row.expanded === (e.key === 'ArrowLeft')) {
        onToggle(row.node.call.id)
      }
      e.preventDefault()
    }
  }

  return (
    <section
      class="tree"
      ref={scroller}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      aria-label="Call tree and timeline"
      data-testid="trace-tree"
      data-row-count={rows.length}
    >
      <div class="tree-spacer" style={{ height: `${rows.length * ROW_HEIGHT}px` }}>
        <div class="tree-window" style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>
          {slice.map((row) => {
            const call = row.node.call
            const bar = barOf(call, bounds, now)
            const status = callStatus(call)
            const isSelected = call.id === selected
            return (
              <div
                key={call.id}
                class={`tree-row${isSelected ? ' selected' : ''}`}
                data-testid="trace-tree-row"
                data-call-id={call.id}
              >
                <span class="tree-label" style={{ paddingLeft: `${Math.min(row.depth, 40) * 14}px` }}>
                  {row.node.children.length > 0 ? (
                    <button
                      type="button"
                      class="twisty"
                      aria-label={`${row.expanded ? 'Collapse' : 'Expand'} ${callName(call)}`}
                      aria-expanded={row.expanded}
                      onClick={() => onToggle(call.id)}
                      data-testid="trace-tree-toggle"
                    >
                      {row.expanded ? '▾' : '▸'}
                    </button>
                  ) : (
                    <span class="twisty" aria-hidden="true" />
                  )}
                  <button
                    type="button"
                    class="tree-name"
                    aria-current={isSelected ? 'true' : undefined}
                    onClick={() => onSelect(call.id)}
                    onKeyDown={onKeyDown}
                    title={call.op_name}
                  >
                    <span class={`dot status-${status}`} aria-hidden="true" />
                    <span class="sr-only">
                      level {row.depth + 1}, {status}:{' '}
                    </span>
                    {callName(call)}
                    {row.node.orphan && <span class="muted small"> (parent not loaded)</span>}
                  </button>
                </span>
                <span class="tree-bar-track" aria-hidden="true">
                  <span
                    class={`tree-bar status-${status}`}
                    style={{ left: `${bar.offset * 100}%`, width: `${bar.width * 100}%` }}
                  />
                </span>
                <span class="tree-latency num">{formatDuration(callLatency(call))}</span>
              </div>
            )
          })}
        </div>
      </div>
    </section>
  )
}
