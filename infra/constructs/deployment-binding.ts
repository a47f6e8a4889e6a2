import { CfnResource, Lazy, NestedStack, Stack } from 'aws-cdk-lib'
import type { Deployment } from 'aws-cdk-lib/aws-apigateway'
import type { Construct } from 'constructs'

/**
 * The CloudFormation types whose definitions a REST API deployment snapshots: what the stage serves changes only when
 * a new `AWS::ApiGateway::Deployment` is created after them.
 */
const DEPLOYED_TYPES = new Set([
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Resource',
  'AWS::ApiGateway::Method',
  'AWS::ApiGateway::Authorizer',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::ApiGateway::Model',
  'AWS::ApiGateway::RequestValidator',
])

/**
 * A deployment is a snapshot: CloudFormation creates a new one only when the `Deployment` resource's logical id
 * changes, and CDK rotates that id only for methods added to a `RestApi` in its own stack with `deploy: true`
 * (aws/aws-cdk#12417, #13526), not for routes on an imported API in nested stacks, gateway responses or the
 * authorizer. So the id hashes the synthesised definition (type and properties, tokens resolved to logical ids) of
 * every API Gateway resource under `scope`, nested stacks included, computed at synthesis: a route, method,
 * integration (URI, transfer mode, timeout), authorizer, gateway response, binary media type or endpoint type that
 * differs from the last deploy makes a new deployment, which the stage then points to; an unchanged synth keeps the
 * id, so CloudFormation leaves the deployment alone. The deployment waits for all of them: for each nested stack
 * (CloudFormation cannot depend on a resource inside one, so on the stack, which completes after its methods) and
 * for the authorizer and gateway responses of the API's own stack.
 */
export function bindDeploymentToDefinition(deployment: Deployment, scope: Construct): void {
  const definitions = () =>
    scope.node
      .findAll()
      .filter((c): c is CfnResource => CfnResource.isCfnResource(c) && DEPLOYED_TYPES.has(c.cfnResourceType))
  deployment.addToLogicalId(
    Lazy.any({
      produce: () =>
        definitions().map((resource) => {
          const stack = Stack.of(resource)
          const rendered = (resource as unknown as Renderable)._toCloudFormation().Resources
          // Type and properties only: metadata differs with `--no-path-metadata` and means nothing to API Gateway.
          return Object.entries(stack.resolve(rendered) as Rendered['Resources']).map(([id, r]) => ({
            stack: stack.node.path,
            id,
            type: r.Type,
            properties: r.Properties ?? {},
          }))
        }),
    }),
  )
  const targets = new Set<Construct>()
  for (const resource of definitions()) {
    if (resource.cfnResourceType === 'AWS::ApiGateway::RestApi') continue
    const stack = Stack.of(resource)
    targets.add(NestedStack.isNestedStack(stack) ? stack : resource)
  }
  for (const target of targets) deployment.node.addDependency(target)
}

type Rendered = { Resources: Record<string, { Type: string; Properties?: unknown }> }
/** `CfnElement._toCloudFormation`, internal to aws-cdk-lib but what its own deployment hash renders. */
type Renderable = { _toCloudFormation(): Rendered }
