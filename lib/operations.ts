/**
 * What an operator watches: CloudWatch alarms, each saying why it matters and what to look at,
 * sent to one SNS topic (with an email subscription when the stack is given `alarmEmail`), and a
 * dashboard of the same figures plus the service's own metrics (lambdas/observability/metrics.ts).
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE } from '../lambdas/observability/metrics.ts';
import { SERVICE_NAME } from './service-function.ts';

export interface OperationsProps {
  readonly restApi: RestApi;
  readonly authorizer: IFunction;
  readonly worker: IFunction;
  readonly synthesisQueue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** Alarms made elsewhere (the DLQ and worker-error alarms of SynthesisJobs) that also notify. */
  readonly existingAlarms: readonly Alarm[];
  /** Receives every alarm by email (the address must confirm the subscription). */
  readonly alarmEmail?: string;
  readonly removalPolicy: RemovalPolicy;
}

/** Thresholds, in one place for the README and the tests. */
export const ALARM_THRESHOLDS = {
  oldestJobAgeSeconds: 600,
  api5xxPercent: 5,
  /** Below this many requests in five minutes the 5xx rate is not judged: one error of two is noise. */
  api5xxMinimumRequests: 20,
  authorizerErrors: 1,
  apiP99LatencyMs: 5_000,
} as const;

const FIVE_MINUTES = Duration.minutes(5);

/** A metric of our namespace; Powertools adds the `service` dimension to every metric set. */
const serviceMetric = (metricName: string, statistic: string, dimensions: Record<string, string> = {}) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME, ...dimensions },
    period: FIVE_MINUTES,
    statistic,
  });

/** Every series of a metric, whatever its extra dimension's values (handlers, models, error classes). */
const allSeries = (metricName: string, dimensions: string[], statistic: string, label: string) =>
  new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${['service', ...dimensions].join(',')}} MetricName="${metricName}" service="${SERVICE_NAME}"', '${statistic}', 300)`,
    label,
    period: FIVE_MINUTES,
  });

export class Operations extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);

    // CloudWatch cannot publish to a topic under the AWS-managed SNS key: it needs a key whose
    // policy lets cloudwatch.amazonaws.com use it.
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the alarm topic; CloudWatch may use it to publish alarms',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: 'Pipeline Synthesis API alarms',
      masterKey: key,
      enforceSSL: true,
    });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    // By stage: two stacks in one account may give their APIs the same name.
    const api = props.restApi.deploymentStage;
    const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const api5xxRate = new MathExpression({
      expression: `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      label: 'API 5xx (% of requests)',
      period: FIVE_MINUTES,
    });
    const p99Latency = api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' });
    const oldestJobAge = props.synthesisQueue.metricApproximateAgeOfOldestMessage({
      period: FIVE_MINUTES,
      statistic: 'Maximum',
    });
    const authorizerErrors = props.authorizer.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' });

    const alarm = (alarmId: string, description: string, metric: IMetric, threshold: number, periods = 1) =>
      new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: periods,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    const ownAlarms = [
      alarm(
        'OldestJobAgeAlarm',
        `A synthesis job has waited ${ALARM_THRESHOLDS.oldestJobAgeSeconds / 60} minutes or more in the queue: ` +
          'runs stay pending. Check that the worker is consuming (its errors, throttles and concurrency).',
        oldestJobAge,
        ALARM_THRESHOLDS.oldestJobAgeSeconds,
      ),
      alarm(
        'Api5xxRateAlarm',
        `At least ${ALARM_THRESHOLDS.api5xxPercent}% of API requests answered 5xx in 5 minutes (with ` +
          `${ALARM_THRESHOLDS.api5xxMinimumRequests}+ requests): callers see failures. The handlers' ERROR log lines name the route and the error.`,
        api5xxRate,
        ALARM_THRESHOLDS.api5xxPercent,
      ),
      alarm(
        'AuthorizerErrorsAlarm',
        'The Lambda authorizer is throwing: API Gateway answers 500 to every authorized request it fails. ' +
          "Read the authorizer's log group.",
        authorizerErrors,
        ALARM_THRESHOLDS.authorizerErrors,
      ),
      alarm(
        'ApiLatencyP99Alarm',
        `API p99 latency has been ${ALARM_THRESHOLDS.apiP99LatencyMs / 1000} s or more for 15 minutes: callers wait or time out. ` +
          'Look for DynamoDB throttling, cold starts and slow handlers in the traces.',
        p99Latency,
        ALARM_THRESHOLDS.apiP99LatencyMs,
        3,
      ),
    ];
    this.alarms = [...props.existingAlarms, ...ownAlarms];
    const action = new SnsAction(this.topic);
    for (const each of this.alarms) {
      each.addAlarmAction(action);
      each.addOkAction(action);
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(6),
      widgets: [
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 })],
        [
          new GraphWidget({ title: 'API requests', left: [requests], right: [api5xxRate], width: 8 }),
          new GraphWidget({
            title: 'API latency (ms)',
            left: [api.metricLatency({ period: FIVE_MINUTES, statistic: 'p50' }), p99Latency],
            width: 8,
          }),
          new GraphWidget({ title: 'Authorizer errors', left: [authorizerErrors], width: 8 }),
        ],
        [
          new GraphWidget({
            title: 'Runs started / generated / failed',
            left: [
              allSeries(METRIC.runsStarted, ['synthesisHandler'], 'Sum', 'started'),
              allSeries(METRIC.runsGenerated, ['synthesisHandler'], 'Sum', 'generated'),
              allSeries(METRIC.runsFailed, ['synthesisHandler', 'errorClass'], 'Sum', 'failed'),
            ],
            width: 8,
          }),
          new GraphWidget({
            title: 'Generation duration (ms)',
            left: [
              allSeries(METRIC.generationDuration, ['synthesisHandler'], 'p50', 'p50'),
              allSeries(METRIC.generationDuration, ['synthesisHandler'], 'p99', 'p99'),
            ],
            width: 8,
          }),
          new GraphWidget({
            title: 'Model tokens and cost (USD)',
            left: [
              allSeries(METRIC.modelInputTokens, ['model'], 'Sum', 'input tokens'),
              allSeries(METRIC.modelOutputTokens, ['model'], 'Sum', 'output tokens'),
            ],
            right: [allSeries(METRIC.modelCostUsd, ['model'], 'Sum', 'cost')],
            width: 8,
          }),
        ],
        [
          new GraphWidget({
            title: 'Synthesis queue',
            left: [
              props.synthesisQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES }),
              props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES }),
            ],
            right: [oldestJobAge],
            width: 12,
          }),
          new GraphWidget({
            title: 'Worker: failed jobs, retries, swept runs',
            left: [
              serviceMetric(METRIC.jobErrors, 'Sum'),
              serviceMetric(METRIC.jobRetries, 'Sum'),
              serviceMetric(METRIC.runsSwept, 'Sum'),
              props.worker.metricErrors({ period: FIVE_MINUTES }),
            ],
            width: 12,
          }),
        ],
      ],
    });
  }
}
