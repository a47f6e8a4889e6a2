import { App, type AppProps } from 'aws-cdk-lib'

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
