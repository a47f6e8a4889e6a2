/**
 * The op name gateway completions are recorded under in the caller's project. Its own module: the project header's
 * check (shared/http/inference-project.ts), which every function's app loads, needs it without
 * shared/inference/trace-completion.ts, whose lazily loaded tracing write path a bundle would take in whole.
 */
export const TRACE_OP_NAME = 'loom.chat.completions'
