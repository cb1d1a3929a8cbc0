/**
 * The SNS topic every alarm notifies (with an email subscription when the stack is given
 * `alarmEmail`), encrypted with a key CloudWatch may use. It lives in the stateful stack: a
 * subscriber confirms once, and redeploying the functions never makes them confirm again.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  /** Receives every alarm by email (the address must confirm the subscription). */
  readonly alarmEmail?: string;
  readonly removalPolicy: RemovalPolicy;
}

export class AlarmTopic extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
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
  }
}
