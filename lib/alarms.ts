import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * An alarm on a dead-letter queue holding anything: one visible message in 5 minutes is a person's
 * business. `description` says what is stuck there and where its log lines are.
 */
export function deadLetterQueueAlarm(
  scope: Construct,
  id: string,
  queue: IQueue,
  description: string,
): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric: queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(5),
      statistic: 'Maximum',
    }),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
