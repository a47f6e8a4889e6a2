import { ArnFormat, CfnOutput, Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib'
import type { Stage } from 'aws-cdk-lib/aws-apigateway'
import { Alarm, ComparisonOperator, type IMetric, Metric, TreatMissingData, Unit } from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Key } from 'aws-cdk-lib/aws-kms'
import { FilterPattern, type LogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs'
import { Topic } from 'aws-cdk-lib/aws-sns'
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions'
import type { FunctionEntry } from '../../functions/manifest.js'
import { apiPath } from '../route-stack.js'
import type { HttpFunction } from './http-function.js'

/** What the API's alarms watch and whom they notify (thresholds: `ApiStackProps`, infra/api-stack.ts). */
export type ApiAlarmsProps = {
  stage: Stage
  restApiId: string
  stageName: string
  /** The stage's access log, where the buffered routes' latency is read. */
  accessLogs: LogGroup
  functions: readonly FunctionEntry[]
  functionsById: ReadonlyMap<string, HttpFunction>
  alarmEmail?: string | undefined
  serverErrorRateThreshold?: number | undefined
  p99LatencyThresholdMs?: number | undefined
  streamDurationThresholdMs?: number | undefined
}

/**
 * The alarms' SNS topic: SSL-only and encrypted with its own rotating KMS key (AwsSolutions SNS2/SNS3, KMS5), which
 * CloudWatch may use; the AWS managed `alias/aws/sns` key would not let CloudWatch publish to the topic.
 */
function alarmTopicOf(stack: Stack, email: string | undefined, stageName: string): Topic {
  const key = new Key(stack, 'AlarmTopicKey', {
    description: `Encrypts the Loom ${stageName} alarm topic`,
    enableKeyRotation: true,
    // Encrypts only notifications in flight, nothing stored: no reason to keep it after the stack.
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  })
  // CloudWatch acts only for this account's alarms in this region (confused deputy): the conditions AWS documents for
  // services publishing to encrypted topics, on both the key and the topic.
  const cloudwatch = new ServicePrincipal('cloudwatch.amazonaws.com')
  const onlyOurAlarms = {
    StringEquals: { 'aws:SourceAccount': stack.account },
    ArnLike: {
      'aws:SourceArn': stack.formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    },
  }
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsUseKey',
      principals: [cloudwatch],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: onlyOurAlarms,
    }),
  )
  const topic = new Topic(stack, 'AlarmTopic', {
    displayName: `Loom ${stageName} alarms`,
    masterKey: key,
    enforceSSL: true,
  })
  // The topic policy CDK writes (the SSL-only Deny) replaces SNS's default one, so alarms get their own Allow.
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [cloudwatch],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: onlyOurAlarms,
    }),
  )
  if (email !== undefined) topic.addSubscription(new EmailSubscription(email))
  return topic
}

/** Namespace of the metrics Loom publishes (functions' EMF records and the access-log latency filter). */
const METRICS_NAMESPACE = 'Loom'

/**
 * Alarms on the stage's 5xx rate, the p99 latency of the routes that end within 29 s (long-running streams excluded:
 * their latency is their length) and, per long-running streaming function, the p99 duration approaching the
 * 15-minute cap. All notify one topic.
 */
export function addApiAlarms(stack: Stack, props: ApiAlarmsProps): void {
  const { stage, restApiId, stageName, accessLogs, functions, functionsById } = props
  const alarmTopic = alarmTopicOf(stack, props.alarmEmail, stageName)
  const alarmAction = new SnsAction(alarmTopic)
  // Every alarm: 2 of 3 five-minute periods over the threshold; no traffic is not an alarm.
  const alarm = (id: string, description: string, metric: IMetric, threshold: number) => {
    const created = new Alarm(stack, id, {
      alarmDescription: `${description} (Loom ${stageName})`,
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    })
    // OK actions too, so whoever was paged also learns when it is over.
    created.addAlarmAction(alarmAction)
    created.addOkAction(alarmAction)
    return created
  }
  // Rate, not count: 5XXError's Average is the share of requests answered 5xx.
  alarm(
    'ServerErrorRateAlarm',
    'Share of API requests answered 5xx',
    stage.metricServerError({ statistic: 'Average', period: Duration.minutes(5) }),
    props.serverErrorRateThreshold ?? 0.05,
  )
  // API Gateway's own Latency has one value per stage (per-method metrics cost ~$2 per method a month), so the
  // buffered routes' latency comes from the access log: every line except the long-running streams'. The streamed
  // tracing reads stay in: their functions end within 29 s like the buffered ones.
  const streamPaths = functions.filter((f) => f.longRunning).flatMap((f) => f.routes.map((r) => apiPath(r.path)))
  const bufferedLatency = new MetricFilter(stack, 'BufferedLatencyFilter', {
    logGroup: accessLogs,
    metricNamespace: METRICS_NAMESPACE,
    metricName: 'BufferedLatency',
    filterPattern: FilterPattern.all(
      FilterPattern.exists('$.responseLatency'),
      ...streamPaths.map((path) => FilterPattern.stringValue('$.resourcePath', '!=', path)),
    ),
    metricValue: '$.responseLatency',
    dimensions: { ApiId: '$.apiId', Stage: '$.stage' },
    unit: Unit.MILLISECONDS,
  })
  alarm(
    'BufferedLatencyP99Alarm',
    'p99 latency of the buffered (non-streaming) routes',
    new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'BufferedLatency',
      dimensionsMap: { ApiId: restApiId, Stage: stageName },
      statistic: 'p99',
      period: Duration.minutes(5),
    }),
    props.p99LatencyThresholdMs ?? 5_000,
  ).node.addDependency(bufferedLatency)
  for (const entry of functions.filter((f) => f.longRunning)) {
    const fn = functionsById.get(entry.id)
    if (fn === undefined) continue
    alarm(
      `StreamDurationAlarm${fn.node.id}`,
      `p99 duration of ${entry.id} streams, near the 15-minute cap`,
      fn.metricDuration({ statistic: 'p99', period: Duration.minutes(5) }),
      props.streamDurationThresholdMs ?? 600_000,
    )
  }
  new CfnOutput(stack, 'AlarmTopicArn', {
    description: 'SNS topic the 5xx-rate, latency and stream-duration alarms notify',
    value: alarmTopic.topicArn,
  })
}
