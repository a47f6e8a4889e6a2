import type { Stage } from 'aws-cdk-lib/aws-apigateway'
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2'
import { Construct } from 'constructs'

/** Props of the stage's web ACL. */
export type RateLimitAclProps = {
  /** The stage the web ACL is associated with. */
  stage: Stage
  /**
   * Requests one client IP may make per evaluation window before WAF answers 429 until its rate drops.
   * @default 6_000 (20 requests/s sustained over 5 minutes)
   */
  limit?: number
  /**
   * The window the rate is counted over, in seconds: 60, 120, 300 or 600.
   * @default 300
   */
  windowSeconds?: 60 | 120 | 300 | 600
  /** The JSON body WAF answers a blocked request with (API Gateway's throttling body, every family's error key). */
  blockedBody: string
  /** Metric name prefix in the `AWS/WAFV2` namespace, unique per deployment. */
  metricPrefix: string
}

/**
 * An opt-in AWS WAF web ACL on the stage with one rate-based rule per client IP. It stops a flood (junk keys
 * included) before API Gateway, the authorizer and the functions are paid for; it costs a fixed $5/month per web ACL
 * plus $1/month per rule and $0.60 per million requests inspected (docs/costs.md).
 */
export class RateLimitAcl extends Construct {
  readonly webAcl: CfnWebACL

  constructor(scope: Construct, id: string, props: RateLimitAclProps) {
    super(scope, id)
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${props.metricPrefix}-${name}`,
      sampledRequestsEnabled: true,
    })
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('all'),
      customResponseBodies: { throttled: { contentType: 'APPLICATION_JSON', content: props.blockedBody } },
      rules: [
        {
          name: 'RatePerIp',
          priority: 0,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: props.limit ?? 6_000,
              evaluationWindowSec: props.windowSeconds ?? 300,
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'throttled',
                responseHeaders: [{ name: 'Retry-After', value: '60' }],
              },
            },
          },
          visibilityConfig: visibility('rate-per-ip'),
        },
      ],
    })
    const association = new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    })
    // The stage ARN is built from names, so CloudFormation would not otherwise wait for the stage to exist.
    association.node.addDependency(props.stage)
  }
}
