import { BadRequestError } from '#shared/errors/http-error'
import type { FeedbackCreateReq } from '#shared/schemas/feedback'
import { resolveObjVersion } from '#shared/tracing/objects-resolve'

// Weave caps the payload's JSON (feedback.py); larger payloads are a 400.
const MAX_PAYLOAD_BYTES = 1 << 20
const NOTE_MAX = 1024
// biome-ignore lint/complexity/useRegexLiterals: a `v`-flag literal needs an ES2024 target; Node 20 runs it.
const ONE_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v')
const SKIN_TONES = /[\u{1F3FB}-\u{1F3FF}]/gu

// Python's `emoji.demojize` names of the reactions Weave's UI offers; others keep the emoji itself as alias.
const EMOJI_NAMES: Record<string, string> = {
  '👍': ':thumbs_up:',
  '👎': ':thumbs_down:',
  '❤️': ':red_heart:',
  '😂': ':face_with_tears_of_joy:',
  '🎉': ':party_popper:',
  '🚀': ':rocket:',
  '👀': ':eyes:',
  '😄': ':grinning_face_with_smiling_eyes:',
  '😕': ':confused_face:',
  '🔥': ':fire:',
  '✅': ':check_mark_button:',
  '❌': ':cross_mark:',
}

/** A parsed `weave:///entity/project/<kind>/<name>[:<digest>]` reference. */
export type WeaveRef = { project: string; kind: string; name: string; digest: string | undefined }

/** Parses a weave ref, or undefined when the text is not one. */
export function parseWeaveRef(ref: string): WeaveRef | undefined {
  const m = /^weave:\/\/\/([^/]+)\/([^/]+)\/(object|op|call|table|file)\/([^/:]+)(?::([^/]+))?(?:\/.*)?$/.exec(ref)
  if (m === null) return undefined
  return { project: `${m[1]}/${m[2]}`, kind: m[3] as string, name: m[4] as string, digest: m[5] }
}

function checkRef(field: string, ref: string, kinds: string[]): WeaveRef {
  const parsed = parseWeaveRef(ref)
  const needsDigest = !kinds.includes('call')
  if (parsed === undefined || !kinds.includes(parsed.kind) || (needsDigest && parsed.digest === undefined)) {
    throw new BadRequestError(`Invalid ${field}: ${ref}`)
  }
  return parsed
}

// The `emoji` package names a toned emoji `<base name>_<tone>_skin_tone`.
const TONES: Record<string, string> = {
  '\u{1F3FB}': 'light',
  '\u{1F3FC}': 'medium-light',
  '\u{1F3FD}': 'medium',
  '\u{1F3FE}': 'medium-dark',
  '\u{1F3FF}': 'dark',
}

function demojize(emoji: string): string {
  const named = EMOJI_NAMES[emoji] ?? EMOJI_NAMES[`${emoji}\uFE0F`]
  if (named !== undefined) return named
  const tone = [...emoji].find((ch) => TONES[ch] !== undefined)
  const base = tone === undefined ? undefined : EMOJI_NAMES[emoji.replace(tone, '')]
  return tone !== undefined && base !== undefined ? `${base.slice(0, -1)}_${TONES[tone]}_skin_tone:` : emoji
}

// Lengths as Weave counts them: pydantic's `max_length` and the `jsonschema` package count code points (Python `len`),
// not UTF-16 units, so an emoji is one character.
function codePoints(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

// The subset of JSON Schema that annotation specs use (type, bounds, enum, lengths).
function matchesSchema(value: unknown, schema: unknown): boolean {
  if (!isObject(schema)) return true
  const type = schema.type
  if (type === 'number' || type === 'integer') {
    if (typeof value !== 'number' || (type === 'integer' && !Number.isInteger(value))) return false
    if (typeof schema.minimum === 'number' && value < schema.minimum) return false
    if (typeof schema.maximum === 'number' && value > schema.maximum) return false
  } else if (type === 'string') {
    if (typeof value !== 'string') return false
    const length = codePoints(value)
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return false
    if (typeof schema.minLength === 'number' && length < schema.minLength) return false
  } else if (type === 'boolean' && typeof value !== 'boolean') return false
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false
  return true
}

async function checkAnnotation(req: FeedbackCreateReq, name: string): Promise<void> {
  const ref = req.annotation_ref
  if (ref == null) throw new BadRequestError('annotation_ref is required for annotation feedback')
  const parsed = checkRef('annotation_ref', ref, ['object'])
  const found =
    parsed.project === req.project_id && parsed.name === name
      ? await resolveObjVersion(req.project_id, parsed.name, parsed.digest as string, true)
      : undefined
  if (found === undefined || found.version.deleted_at) throw new BadRequestError(`Annotation ref ${ref} not found`)
  const spec = JSON.parse(found.valText ?? '{}') as Record<string, unknown>
  if (!('value' in req.payload) || !matchesSchema(req.payload.value, spec.field_schema)) {
    throw new BadRequestError('Feedback payload does not match annotation spec')
  }
}

/**
 * Weave's feedback validation (docs/tracing.md §11.1), all 400: payload size, per-type payloads and refs. Returns the
 * payload as stored (reactions gain `alias`, `detoned`, `detoned_alias`).
 */
export async function validateFeedback(req: FeedbackCreateReq): Promise<Record<string, unknown>> {
  if (Buffer.byteLength(JSON.stringify(req.payload), 'utf8') > MAX_PAYLOAD_BYTES) {
    throw new BadRequestError('Feedback payload too large')
  }
  const type = req.feedback_type
  const isRunnable = type.startsWith('wandb.runnable.')
  const isAnnotation = type.startsWith('wandb.annotation.')
  if (!isAnnotation && req.annotation_ref != null)
    throw new BadRequestError('annotation_ref is not allowed for non-annotation feedback')
  if (!isRunnable) {
    for (const field of ['runnable_ref', 'call_ref', 'trigger_ref'] as const) {
      if (req[field] != null) throw new BadRequestError(`${field} is not allowed for non-runnable feedback`)
    }
    const scorerUsed =
      req.scorer_tags.length > 0 ||
      [
        req.scorer_tag_reasons,
        req.scorer_tag_confidences,
        req.scorer_ratings,
        req.scorer_rating_reasons,
        req.scorer_rating_confidences,
      ].some((m) => Object.keys(m).length > 0) ||
      req.scorer_trace_id !== ''
    if (scorerUsed) throw new BadRequestError('scorer fields are only allowed for runnable or monitor feedback')
  }
  if (type === 'wandb.reaction.1') {
    const emoji = req.payload.emoji
    if (typeof emoji !== 'string')
      throw new BadRequestError(`Invalid payload for feedback_type ${type}: emoji must be a string`)
    if (!ONE_EMOJI.test(emoji)) throw new BadRequestError('Value of emoji key in payload must be exactly one emoji')
    const detoned = emoji.replace(SKIN_TONES, '')
    return { ...req.payload, alias: demojize(emoji), detoned, detoned_alias: demojize(detoned) }
  }
  if (type === 'wandb.note.1') {
    const note = req.payload.note
    if (typeof note !== 'string' || note === '' || codePoints(note) > NOTE_MAX) {
      throw new BadRequestError(
        `Invalid payload for feedback_type ${type}: note must be a string of 1 to ${NOTE_MAX} characters`,
      )
    }
  }
  if (isAnnotation) await checkAnnotation(req, type.slice('wandb.annotation.'.length))
  if (isRunnable) {
    const name = type.slice('wandb.runnable.'.length)
    if (req.runnable_ref == null) throw new BadRequestError('runnable_ref is required for runnable feedback')
    const runnable = checkRef('runnable_ref', req.runnable_ref, ['op', 'object'])
    if (runnable.name !== name)
      throw new BadRequestError(`runnable_ref name ${runnable.name} does not match feedback_type ${type}`)
    if (runnable.kind === 'op' && req.call_ref == null)
      throw new BadRequestError('call_ref is required for op runnable feedback')
    if (req.call_ref != null) checkRef('call_ref', req.call_ref, ['call'])
    if (req.trigger_ref != null) checkRef('trigger_ref', req.trigger_ref, ['object'])
    if (!('output' in req.payload))
      throw new BadRequestError(`Invalid payload for feedback_type ${type}: output is required`)
  }
  return req.payload
}
