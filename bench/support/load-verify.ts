/** Every write the load benchmark saw acknowledged, by kind. */
export type Acked = {
  calls: string[]
  feedback: string[]
  objects: { objectId: string; digest: string }[]
  logs: string[]
  /** Sums of the usage the completions reported. */
  usage: { requests: number; prompt: number; completion: number }
}

/** Where and as whom to read back. */
export type Target = {
  base: string
  basic: Record<string, string>
  bearer: Record<string, string>
  project: string
  inferenceProject: string
}

/** How many writes of each kind were checked, how many were not readable or read back twice; notes. */
export type Verdict = {
  checked: Record<string, number>
  lost: Record<string, number>
  duplicated: Record<string, number>
  notes: string[]
}

const CHUNK = 200

async function post(t: Target, path: string, body: unknown, headers = t.basic): Promise<string> {
  const res = await fetch(`${t.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`verify ${path}: ${res.status} ${text.slice(0, 200)}`)
  return text
}

async function get(t: Target, path: string): Promise<unknown> {
  const res = await fetch(`${t.base}${path}`, { headers: t.bearer })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`verify ${path}: ${res.status} ${text.slice(0, 200)}`)
  return JSON.parse(text)
}

/**
 * Calls: `calls/stream_query` by ids in chunks; a call counts as lost when missing or when its end is missing, and
 * as duplicated when listed more than once.
 */
async function checkCalls(t: Target, ids: string[]): Promise<{ lost: number; duplicated: number }> {
  let lost = 0
  let duplicated = 0
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK)
    const text = await post(t, '/calls/stream_query', { project_id: t.project, filter: { call_ids: chunk } })
    const rows = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { id: string; ended_at: string | null })
    const ended = new Set(rows.filter((c) => c.ended_at !== null).map((c) => c.id))
    lost += chunk.filter((id) => !ended.has(id)).length
    duplicated += rows.length - new Set(rows.map((c) => c.id)).size
  }
  return { lost, duplicated }
}

/** Feedback: every row of the project through `feedback/query`, paged; rows nobody was answered are extras. */
async function checkFeedback(t: Target, ids: string[]): Promise<{ lost: number; extra: number }> {
  const seen: string[] = []
  for (let offset = 0; ; offset += 1_000) {
    const text = await post(t, '/feedback/query', { project_id: t.project, fields: ['id'], limit: 1_000, offset })
    const page = (JSON.parse(text) as { result: { id: string }[] }).result
    seen.push(...page.map((row) => row.id))
    if (page.length < 1_000) break
  }
  const seenSet = new Set(seen)
  return { lost: ids.filter((id) => !seenSet.has(id)).length, extra: seen.length - new Set(ids).size }
}

/** Objects: each acknowledged version through `obj/read`, a few at a time. */
async function lostObjects(t: Target, objects: Acked['objects']): Promise<number> {
  let lost = 0
  for (let i = 0; i < objects.length; i += 16) {
    const reads = objects.slice(i, i + 16).map(async (o) => {
      const res = await fetch(`${t.base}/obj/read`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.basic },
        body: JSON.stringify({ project_id: t.project, object_id: o.objectId, digest: o.digest }),
      })
      const body = (await res.json()) as { obj?: { digest: string } }
      if (res.status !== 200 || body.obj?.digest !== o.digest) lost++
    })
    await Promise.all(reads)
  }
  return lost
}

/**
 * Object versions per object id through `objs/query`: every acknowledged digest listed once, version indexes 0..n-1
 * without repeats, and exactly one version marked latest. Returns how many objects break that.
 */
async function badObjectHistories(t: Target, objects: Acked['objects']): Promise<number> {
  const byId = new Map<string, Set<string>>()
  for (const o of objects) byId.set(o.objectId, (byId.get(o.objectId) ?? new Set()).add(o.digest))
  let bad = 0
  for (const [objectId, digests] of byId) {
    const body = { project_id: t.project, filter: { object_ids: [objectId], latest_only: false }, metadata_only: true }
    const { objs } = JSON.parse(await post(t, '/objs/query', body)) as {
      objs: { digest: string; version_index: number; is_latest: number }[]
    }
    const listed = new Set(objs.map((o) => o.digest))
    const indexes = objs.map((o) => o.version_index).sort((a, b) => a - b)
    const dense = indexes.every((v, i) => v === i)
    const latest = objs.filter((o) => o.is_latest === 1).length
    const complete = [...digests].every((d) => listed.has(d)) && listed.size === objs.length
    if (!dense || latest !== 1 || !complete) bad++
  }
  return bad
}

/**
 * Reads every acknowledged write back through the public read endpoints. Usage counters must equal what the
 * completions reported (the meter adds each finished completion once); fewer means lost, more means double-counted.
 */
export async function verifyWrites(
  t: Target,
  acked: Acked,
  run: { runStart: number; trainingModel: string },
): Promise<Verdict> {
  const calls = [...new Set(acked.calls)]
  const notes: string[] = []
  const callCheck = await checkCalls(t, calls)
  const feedbackCheck = await checkFeedback(t, acked.feedback)
  const stats = JSON.parse(await post(t, '/calls/query_stats', { project_id: t.project })) as { count: number }
  const verdict: Verdict = {
    checked: {
      calls: calls.length,
      feedback: acked.feedback.length,
      objects: acked.objects.length,
      'training logs': acked.logs.length,
      'metered completions': acked.usage.requests,
    },
    lost: {
      calls: callCheck.lost,
      feedback: feedbackCheck.lost,
      objects: await lostObjects(t, acked.objects),
      'object histories (versions, indexes, latest)': await badObjectHistories(t, acked.objects),
    },
    duplicated: {
      'calls listed twice': callCheck.duplicated,
      'feedback rows beyond the acknowledged ids': Math.max(0, feedbackCheck.extra),
      'calls/query_stats count beyond the acknowledged calls': Math.max(0, stats.count - calls.length),
    },
    notes,
  }
  notes.push(`calls/query_stats count ${stats.count} for ${calls.length} acknowledged calls`)
  if (stats.count < calls.length) verdict.lost['calls/query_stats count'] = calls.length - stats.count
  const history = (await get(t, `/v1/preview/models/${run.trainingModel}/metrics`)) as { rows: { log_id: string }[] }
  const logged = new Set(history.rows.map((r) => r.log_id))
  verdict.lost['training logs'] = acked.logs.filter((id) => !logged.has(id)).length

  const start = new Date(run.runStart - 3_600_000).toISOString()
  const end = new Date(Date.now() + 3_600_000).toISOString()
  const query = new URLSearchParams({ project: t.inferenceProject, start, end })
  const usage = (await get(t, `/v1/usage?${query}`)) as {
    total: { requests: number; prompt_tokens: number; completion_tokens: number }
  }
  const u = acked.usage
  const missing =
    Math.max(0, u.requests - usage.total.requests) +
    Math.max(0, u.prompt - usage.total.prompt_tokens) +
    Math.max(0, u.completion - usage.total.completion_tokens)
  verdict.lost['metered completions'] = missing > 0 ? Math.max(1, u.requests - usage.total.requests) : 0
  notes.push(
    `usage: completions reported ${u.requests} requests / ${u.prompt} prompt / ${u.completion} completion tokens; ` +
      `GET /v1/usage totals ${usage.total.requests} / ${usage.total.prompt_tokens} / ${usage.total.completion_tokens}`,
  )
  if (
    usage.total.requests > u.requests ||
    usage.total.prompt_tokens > u.prompt ||
    usage.total.completion_tokens > u.completion
  ) {
    notes.push('usage counters exceed what the completions reported (double counting, or a failed completion metered)')
  }
  return verdict
}
