import { Component } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { Call } from '../lib/calls'
import { callLatency, callName, callStatus } from '../lib/calls'
import { formatDuration } from '../lib/format'
import { barOf, depthMarks, type TreeRow } from '../lib/tree'

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

/** What a row calls back; one object for the tree's lifetime, so rows compare equal across renders. */
type RowActions = {
  select: (id: string) => void
  toggle: (id: string) => void
  keyDown: (e: KeyboardEvent) => void
}

type RowProps = {
  row: TreeRow<Call>
  bounds: { start: number; end: number }
  now: number
  isSelected: boolean
  actions: RowActions
}

/**
 * One row of the tree. While scrolling, most rows of the window stay in it from one frame to the next: those keep
 * their props and are not rendered again, so a frame renders only the rows that came into view.
 */
class TreeRowView extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const p = this.props
    return (
      p.row !== next.row ||
      p.bounds !== next.bounds ||
      p.now !== next.now ||
      p.isSelected !== next.isSelected ||
      p.actions !== next.actions
    )
  }

  override render({ row, bounds, now, isSelected, actions }: RowProps) {
    const call = row.node.call
    const bar = barOf(call, bounds, now)
    const status = callStatus(call)
    const name = callName(call)
    const { indent, level } = depthMarks(row.depth)
    return (
      <div class={`tree-row${isSelected ? ' selected' : ''}`} data-testid="trace-tree-row" data-call-id={call.id}>
        {/* The step is a share of the label column (styles.css), so the deepest indent leaves the name its room. */}
        <span class="tree-label" style={{ '--indent': indent }}>
          {row.node.children.length > 0 ? (
            <button
              type="button"
              class="twisty"
              aria-label={`${row.expanded ? 'Collapse' : 'Expand'} ${name}`}
              aria-expanded={row.expanded}
              onClick={() => actions.toggle(call.id)}
              data-testid="trace-tree-toggle"
            >
              {row.expanded ? '▾' : '▸'}
            </button>
          ) : (
            <span class="twisty" aria-hidden="true" />
          )}
          {level !== undefined && (
            <span class="tree-level" title={`Level ${level}`} aria-hidden="true" data-testid="trace-tree-level">
              {level}
            </span>
          )}
          <button
            type="button"
            class="tree-name"
            aria-current={isSelected ? 'true' : undefined}
            onClick={() => actions.select(call.id)}
            onKeyDown={actions.keyDown}
            title={name === call.op_name ? name : `${name} (${call.op_name})`}
          >
            <span class={`dot status-${status}`} aria-hidden="true" />
            <span class="sr-only">
              level {row.depth + 1}, {status}:{' '}
            </span>
            {name}
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
  }
}

/** The rows `[first, last)` of the window rendered for a scroll position and viewport height. */
function windowAt(scrollTop: number, height: number, count: number): { first: number; last: number } {
  return {
    first: Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN),
    last: Math.min(count, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN),
  }
}

/**
 * The call tree with a waterfall bar per call, virtualised: only the rows in view (plus a margin) are in the DOM, so
 * a 10,000-call trace scrolls as smoothly as a 10-call one. A scroll renders only when the window of rows changes, and
 * then only the rows new to it. Every call is a button; on one, Up/Down/PageUp/PageDown/Home/End move the selection
 * (and the focus with it) and Right/Left expand and collapse.
 */
export function CallTree({ rows, bounds, now, selected, onSelect, onToggle }: Props) {
  const scroller = useRef<HTMLElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [height, setHeight] = useState(480)
  // The latest props, read by the row callbacks, which stay the same object for the tree's lifetime.
  const latest = useRef({ rows, selected, onSelect, onToggle })
  latest.current = { rows, selected, onSelect, onToggle }
  // The row a key moved to, when it was not rendered yet: it comes into the window once the selection has scrolled it
  // into view (after the route changes, a render and a scroll event), and the row that had the focus may leave the
  // window first, dropping the focus to the page. So the focus moves when the row is there, after whichever render
  // brings it; a selection made meanwhile by other means (a click, another link) cancels it.
  const focusTo = useRef<{ id: string; from: string | undefined } | undefined>(undefined)
  const actions = useRef<RowActions | null>(null)
  if (actions.current === null) {
    actions.current = {
      select: (id) => latest.current.onSelect(id),
      toggle: (id) => latest.current.onToggle(id),
      keyDown: (e) => {
        const from = latest.current.selected
        const to = onKeyDown(e, latest.current, scroller.current?.clientHeight ?? 0)
        if (to === undefined) return
        const button = nameButton(scroller.current, to)
        if (button === null) focusTo.current = { id: to, from }
        else button.focus()
      },
    }
  }
  useEffect(() => {
    const want = focusTo.current
    if (want === undefined) return
    if (selected !== want.id && selected !== want.from) {
      focusTo.current = undefined
      return
    }
    const button = nameButton(scroller.current, want.id)
    if (button === null) return
    focusTo.current = undefined
    button.focus()
  })
  useEffect(() => {
    const el = scroller.current
    if (el === null) return
    const resize = new ResizeObserver(() => setHeight(el.clientHeight))
    resize.observe(el)
    return () => resize.disconnect()
  }, [])
  // Keep the selected row in view when the selection changes (keyboard navigation, opening a call from the table),
  // once its row exists; pages that arrive later do not pull the view back to it.
  const shownFor = useRef<string | undefined>(undefined)
  useEffect(() => {
    const el = scroller.current
    if (el === null || selected === undefined || shownFor.current === selected) return
    const index = rows.findIndex((r) => r.node.call.id === selected)
    if (index < 0) return
    shownFor.current = selected
    const top = index * ROW_HEIGHT
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight
  }, [selected, rows])

  const { first, last } = windowAt(scrollTop, height, rows.length)
  const slice = rows.slice(first, last)

  return (
    <section
      class="tree"
      ref={scroller}
      onScroll={(e) => {
        const top = e.currentTarget.scrollTop
        const next = windowAt(top, height, rows.length)
        // Within the same window of rows there is nothing to render: the browser scrolls the rows already there.
        if (next.first !== first || next.last !== last) setScrollTop(top)
      }}
      aria-label="Call tree and timeline"
      data-testid="trace-tree"
      data-row-count={rows.length}
    >
      <div class="tree-spacer" style={{ height: `${rows.length * ROW_HEIGHT}px` }}>
        <div class="tree-window" style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>
          {slice.map((row) => (
            <TreeRowView
              key={row.node.call.id}
              row={row}
              bounds={bounds}
              now={now}
              isSelected={row.node.call.id === selected}
              actions={actions.current as RowActions}
            />
          ))}
        </div>
      </div>
    </section>
  )
}

// The name button of a call's row, when the row is rendered.
function nameButton(scroller: HTMLElement | null, id: string): HTMLButtonElement | null {
  return scroller?.querySelector<HTMLButtonElement>(`[data-call-id="${CSS.escape(id)}"] .tree-name`) ?? null
}

/** Handles a key on a row: selects the call a move goes to and returns its id (undefined when the key moves nothing). */
function onKeyDown(
  e: KeyboardEvent,
  { rows, selected, onSelect, onToggle }: Omit<Props, 'bounds' | 'now'>,
  viewHeight: number,
): string | undefined {
  const index = rows.findIndex((r) => r.node.call.id === selected)
  // PageUp/PageDown move by the rows in view less one, so the row moved from stays in view.
  const page = Math.max(1, Math.floor(viewHeight / ROW_HEIGHT) - 1)
  const move = (to: number) => {
    const row = rows[Math.max(0, Math.min(rows.length - 1, to))]
    e.preventDefault()
    if (row === undefined) return undefined
    onSelect(row.node.call.id)
    return row.node.call.id
  }
  if (e.key === 'ArrowDown') return move(index + 1)
  if (e.key === 'ArrowUp') return move(index - 1)
  if (e.key === 'PageDown') return move(index + page)
  if (e.key === 'PageUp') return move(index - page)
  if (e.key === 'Home') return move(0)
  if (e.key === 'End') return move(rows.length - 1)
  if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && index >= 0) {
    const row = rows[index]
    if (row !== undefined && row.node.children.length > 0 && row.expanded === (e.key === 'ArrowLeft')) {
      onToggle(row.node.call.id)
    }
    e.preventDefault()
  }
  return undefined
}
