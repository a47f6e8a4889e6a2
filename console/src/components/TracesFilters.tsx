import { CALL_STATUSES, type CallFilters } from '../lib/calls'

/**
 * The Traces page's filter form: edits `draft`, each input handing over only the field it changed (two inputs in one
 * task, as autofill sends them, must not build on the same stale draft); Apply hands it over, Reset asks for no filters.
 */
export function TracesFilters({
  draft,
  onChange,
  onApply,
  onReset,
}: {
  draft: CallFilters
  onChange: (change: Partial<CallFilters>) => void
  onApply: () => void
  onReset: () => void
}) {
  function apply(e: Event) {
    e.preventDefault()
    onApply()
  }
  return (
    <form class="filters" onSubmit={apply} data-testid="traces-filters" aria-label="Filter calls">
      <label>
        Op name
        <input
          type="search"
          title="Case-insensitive text in the name a row shows: the display name, else the op's name (without the weave:/// ref and version)."
          value={draft.op}
          onInput={(e) => onChange({ op: e.currentTarget.value })}
          data-testid="filter-op"
        />
      </label>
      <label>
        Status
        <select
          value={draft.status}
          onChange={(e) => onChange({ status: e.currentTarget.value as CallFilters['status'] })}
          data-testid="filter-status"
        >
          <option value="">any</option>
          {CALL_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        From
        <input
          type="datetime-local"
          value={draft.from}
          onInput={(e) => onChange({ from: e.currentTarget.value })}
          data-testid="filter-from"
        />
      </label>
      <label>
        To
        <input
          type="datetime-local"
          value={draft.to}
          onInput={(e) => onChange({ to: e.currentTarget.value })}
          data-testid="filter-to"
        />
      </label>
      <label class="grow">
        Search
        <input
          type="search"
          placeholder="op name, display name, exception, text output"
          title="Case-insensitive text in the op name, display name or exception, or an output that is itself a string or number. Text inside input or output objects is not searched (the API's $contains reads a JSON object as empty, as Weave does)."
          value={draft.text}
          onInput={(e) => onChange({ text: e.currentTarget.value })}
          data-testid="filter-text"
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.rootsOnly}
          onChange={(e) => onChange({ rootsOnly: e.currentTarget.checked })}
          data-testid="filter-roots"
        />
        Root calls only
      </label>
      <button type="submit" data-testid="filter-apply">
        Apply
      </button>
      <button type="button" class="secondary" onClick={onReset} data-testid="filter-reset">
        Reset
      </button>
    </form>
  )
}
