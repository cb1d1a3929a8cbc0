/**
 * What an operator watches: CloudWatch alarms, each saying why it matters and what to look at —
 * one on every dead-letter queue of lambdas/queues.ts and on each queue's declared wait — sent to
 * the stateful stack's alarm topic, and a dashboard of the same figures plus the service's own
 * metrics (lambdas/observability/metrics.ts).
 */
import { Duration } from 'aws-cdk-lib';
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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE } from '../lambdas/observability/metrics.ts';
import type { QueueName } from '../lambdas/queues.ts';
import { pascalCase, SERVICE_NAME } from './names.ts';
import { type DeployedQueue, deadLettersOf } from './queues.ts';

export interface OperationsProps {
  readonly restApi: RestApi;
  readonly authorizer: IFunction;
  /** The synthesis worker, whose errors the dashboard shows beside its own counts. */
  readonly worker: IFunction;
  /** The monitors' judge: alarmed when it throws, and when its passes stop being counted. */
  readonly monitorJudge: IFunction;
  /** Every queue of lambdas/queues.ts: an alarm on each dead-letter queue, a graph of each. */
  readonly queues: ReadonlyMap<QueueName, DeployedQueue>;
  /** Where every alarm goes (the stateful stack's). */
  readonly topic: ITopic;
}

/** Thresholds, in one place for the README and the tests (a queue's wait is its declaration's). */
export const ALARM_THRESHOLDS = {
  api5xxPercent: 5,
  /** Below this many requests in five minutes the 5xx rate is not judged: one error of two is noise. */
  api5xxMinimumRequests: 20,
  authorizerErrors: 1,
  apiP99LatencyMs: 5_000,
  /** Failed synthesis jobs (permanent and retried) in five minutes. */
  workerJobErrors: 3,
  /** Failed invocations of the monitors' judge in five minutes. */
  monitorJudgeErrors: 1,
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

/** An alarm when `metric` reaches `threshold` in `periods` five-minute periods in a row. */
function thresholdAlarm(
  scope: Construct,
  id: string,
  description: string,
  metric: IMetric,
  threshold: number,
  periods = 1,
): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric,
    threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: periods,
    datapointsToAlarm: periods,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

const visible = (queue: IQueue) =>
  queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' });
const oldestAge = (queue: IQueue) =>
  queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' });

export class Operations extends Construct {
  readonly alarms: Alarm[];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const api = apiMetrics(props.restApi, props.authorizer);
    this.alarms = [
      ...this.queueAlarms(props.queues),
      ...this.serviceAlarms(api),
      ...this.monitorJudgeAlarms(props.monitorJudge),
    ];
    const action = new SnsAction(props.topic);
    for (const each of this.alarms) {
      each.addAlarmAction(action);
      each.addOkAction(action);
    }
    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(6),
      widgets: [
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 })],
        apiWidgets(api),
        runWidgets(),
        queueWidgets(props.queues),
        [
          new GraphWidget({
            title: 'Worker: failed jobs, retries, swept runs',
            left: [
              serviceMetric(METRIC.jobErrors, 'Sum'),
              serviceMetric(METRIC.jobRetries, 'Sum'),
              serviceMetric(METRIC.runsSwept, 'Sum'),
              props.worker.metricErrors({ period: FIVE_MINUTES }),
            ],
            width: 24,
          }),
        ],
        [
          new GraphWidget({
            title: "Monitors' judge: passes, monitors judged, changes of state, errors",
            left: [
              serviceMetric(METRIC.monitorJudgeRuns, 'Sum'),
              serviceMetric(METRIC.monitorsJudged, 'Sum'),
              serviceMetric(METRIC.monitorStateChanges, 'Sum'),
              props.monitorJudge.metricErrors({ period: FIVE_MINUTES }),
            ],
            width: 24,
          }),
        ],
      ],
    });
  }

  /**
   * One alarm per dead-letter queue (any visible message: the function that drains it, if any, is
   * failing too), and one per queue whose declaration bounds the wait of its oldest message.
   */
  private queueAlarms(queues: ReadonlyMap<QueueName, DeployedQueue>): Alarm[] {
    const alarms: Alarm[] = [];
    for (const [name, deployed] of queues) {
      const { definition } = deployed;
      alarms.push(
        thresholdAlarm(
          this,
          `${pascalCase(name)}DeadLettersAlarm`,
          definition.deadLetters.alarm,
          visible(deadLettersOf(deployed)),
          1,
        ),
      );
      if (definition.kind === 'work' && definition.oldestMessageAlarm) {
        const { afterSeconds, description } = definition.oldestMessageAlarm;
        alarms.push(
          thresholdAlarm(
            this,
            `${pascalCase(name)}OldestMessageAlarm`,
            `A message of ${name} has waited ${afterSeconds / 60} minutes or more: ${description}`,
            oldestAge(deployed.queue),
            afterSeconds,
          ),
        );
      }
    }
    return alarms;
  }

  /**
   * The monitors' judge: a monitor that stopped being judged is an alert nobody gets, so its
   * errors alarm, and so does a five-minute period without a completed pass (missing data is
   * breaching: a judge that never runs emits nothing at all).
   */
  private monitorJudgeAlarms(judge: IFunction): Alarm[] {
    return [
      thresholdAlarm(
        this,
        'MonitorJudgeErrorsAlarm',
        "The monitors' judge is failing: monitors keep their last state and no one hears of a change. " +
          "Read the judge-monitors function's log group.",
        judge.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        ALARM_THRESHOLDS.monitorJudgeErrors,
      ),
      new Alarm(this, 'MonitorJudgeSilentAlarm', {
        alarmDescription:
          "The monitors' judge completed no pass in 5 minutes (it runs every minute): monitors are not " +
          'judged and their alerts are not sent. Check its schedule rule, its errors and throttles.',
        metric: serviceMetric(METRIC.monitorJudgeRuns, 'Sum'),
        threshold: 1,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        treatMissingData: TreatMissingData.BREACHING,
      }),
    ];
  }

  /** The API's errors and latency, the authorizer's errors and the worker's failed jobs. */
  private serviceAlarms(api: ApiMetrics): Alarm[] {
    return [
      thresholdAlarm(
        this,
        'Api5xxRateAlarm',
        `At least ${ALARM_THRESHOLDS.api5xxPercent}% of API requests answered 5xx in 5 minutes (with ` +
          `${ALARM_THRESHOLDS.api5xxMinimumRequests}+ requests): callers see failures. The handlers' ERROR log lines name the route and the error.`,
        api.serverErrorRate,
        ALARM_THRESHOLDS.api5xxPercent,
      ),
      thresholdAlarm(
        this,
        'AuthorizerErrorsAlarm',
        'The Lambda authorizer is throwing: API Gateway answers 500 to every authorized request it fails. ' +
          "Read the authorizer's log group.",
        api.authorizerErrors,
        ALARM_THRESHOLDS.authorizerErrors,
      ),
      thresholdAlarm(
        this,
        'ApiLatencyP99Alarm',
        `API p99 latency has been ${ALARM_THRESHOLDS.apiP99LatencyMs / 1000} s or more for 15 minutes: callers wait or time out. ` +
          'Look for DynamoDB throttling, cold starts and slow handlers in the traces.',
        api.p99Latency,
        ALARM_THRESHOLDS.apiP99LatencyMs,
        3,
      ),
      // Lambda's Errors metric never counts a record that failed inside a partial batch response, so
      // the alarm watches the worker's own count of failed records (lambdas/sqs/sqs-batch.ts).
      thresholdAlarm(
        this,
        'WorkerErrorsAlarm',
        'Synthesis jobs are failing (permanent failures and retries together, at least 3 in 5 minutes): ' +
          'runs end failed or are late. The worker log lines "synthesis run failed" and "… will be retried" name the runs and the errors.',
        serviceMetric(METRIC.jobErrors, 'Sum'),
        ALARM_THRESHOLDS.workerJobErrors,
      ),
    ];
  }
}

interface ApiMetrics {
  requests: IMetric;
  serverErrorRate: IMetric;
  p50Latency: IMetric;
  p99Latency: IMetric;
  authorizerErrors: IMetric;
}

function apiMetrics(restApi: RestApi, authorizer: IFunction): ApiMetrics {
  // By stage: two stacks in one account may give their APIs the same name.
  const api = restApi.deploymentStage;
  const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
  const serverErrors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
  return {
    requests,
    serverErrorRate: new MathExpression({
      expression: `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      label: 'API 5xx (% of requests)',
      period: FIVE_MINUTES,
    }),
    p50Latency: api.metricLatency({ period: FIVE_MINUTES, statistic: 'p50' }),
    p99Latency: api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
    authorizerErrors: authorizer.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
  };
}

function apiWidgets(api: ApiMetrics): GraphWidget[] {
  return [
    new GraphWidget({ title: 'API requests', left: [api.requests], right: [api.serverErrorRate], width: 8 }),
    new GraphWidget({ title: 'API latency (ms)', left: [api.p50Latency, api.p99Latency], width: 8 }),
    new GraphWidget({ title: 'Authorizer errors', left: [api.authorizerErrors], width: 8 }),
  ];
}

function runWidgets(): GraphWidget[] {
  return [
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
  ];
}

/** A graph per queue: its visible messages and its dead letters, with the age of its oldest message. */
function queueWidgets(queues: ReadonlyMap<QueueName, DeployedQueue>): GraphWidget[] {
  const width = Math.max(4, Math.floor(24 / Math.max(1, queues.size)));
  return [...queues].map(
    ([name, deployed]) =>
      new GraphWidget({
        title: `Queue ${name}`,
        left: deployed.deadLetterQueue
          ? [visible(deployed.queue), visible(deployed.deadLetterQueue)]
          : [visible(deployed.queue)],
        right: [oldestAge(deployed.queue)],
        width,
      }),
  );
}
