import { App, type AppProps } from 'aws-cdk-lib'
import { FUNCTIONS, type FunctionEntry, type FunctionId } from '#functions/manifest'
import { routeStackIdOf } from '../../infra/route-stack.js'

/**
 * An app for synthesising Loom's stacks in tests: Lambda bundling skipped, and none of the CDK's bookkeeping that
 * no template carries (each construct's and each L1 resource's creation stack trace, the logical-id metadata of the
 * cloud assembly, the construct tree file, the analytics metadata). The templates are the ones `cdk synth` writes; a
 * synth takes less than half the time.
 */
export function testApp(props: AppProps = {}): App {
  return new App({
    stackTraces: false,
    treeMetadata: false,
    analyticsReporting: false,
    ...props,
    context: {
      'aws:cdk:bundling-stacks': [],
      'aws:cdk:disable-creation-stack-traces': true,
      'aws:cdk:disable-logicalId-metadata': true,
      ...props.context,
    },
  })
}

/** The manifest entries with these ids, in this order; an id the manifest lacks throws. */
function manifestEntries(...ids: FunctionId[]): FunctionEntry[] {
  return ids.map((id) => {
    const entry = FUNCTIONS.find((f) => f.id === id)
    if (entry === undefined) throw new Error(`no function ${id} in the manifest`)
    return entry
  })
}

/**
 * A few manifest functions, at least one of each shape the stacks treat differently: one in every route stack (meta,
 * inference, training, each tracing area and the tracing family stack), public and authorized routes, no, read and
 * write table access, buffered and streaming integrations, the secret reader, a route on the API root and path
 * parameters below the `/v1` the API stack shares between inference and training. An app of these synthesises in
 * about a third of the time of the whole manifest: for a property of a prop or of the deployment hash, which does not
 * depend on how many functions there are (`functions` of ApiStackProps). Whatever is about every function (routes,
 * grants, counts, the compliance checks) reads an app of the whole manifest.
 */
export const SAMPLE_FUNCTIONS: readonly FunctionEntry[] = manifestEntries(
  'meta/get-health',
  'meta/get-console',
  'inference/create-chat-completion',
  'inference/list-models',
  'training/log-trajectories',
  'tracing/start-call',
  'tracing/read-call',
  'tracing/stream-query-calls',
  'tracing/read-obj',
  'tracing/create-feedback',
  'tracing/list-projects',
)

// A route stack added to the manifest (a new area) must be sampled too, or tests of the sample would miss it.
const unsampled = [...new Set(FUNCTIONS.map(routeStackIdOf))].filter(
  (stackId) => !SAMPLE_FUNCTIONS.some((f) => routeStackIdOf(f) === stackId),
)
if (unsampled.length > 0) throw new Error(`SAMPLE_FUNCTIONS has no function in ${unsampled.join(', ')}`)
