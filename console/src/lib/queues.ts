/** An annotation queue item as `items/query` returns it (the fields the console reads). */
export type QueueItem = {
  id: string
  call_id: string
  call_op_name: string
  call_trace_id: string
  call_started_at: string
  annotation_state: 'unstarted' | 'in_progress' | 'completed' | 'skipped'
  annotator_user_id: string
  position_in_queue: number | null
}

/** Items per annotator and state. */
export type AnnotatorProgress = { annotator: string; completed: number; skipped: number; in_progress: number }

/**
 * Progress per annotator from a queue's items: the API gives each item's latest state and the annotator who set it,
 * so an item counts once, under that annotator; items nobody started are pending.
 */
export function annotatorProgress(items: readonly QueueItem[]): { annotators: AnnotatorProgress[]; pending: number } {
  const by = new Map<string, AnnotatorProgress>()
  let pending = 0
  for (const item of items) {
    if (item.annotation_state === 'unstarted' || item.annotator_user_id === '') {
      pending++
      continue
    }
    let row = by.get(item.annotator_user_id)
    if (row === undefined) {
      row = { annotator: item.annotator_user_id, completed: 0, skipped: 0, in_progress: 0 }
      by.set(item.annotator_user_id, row)
    }
    row[item.annotation_state]++
  }
  return { annotators: [...by.values()].sort((a, b) => (a.annotator < b.annotator ? -1 : 1)), pending }
}
