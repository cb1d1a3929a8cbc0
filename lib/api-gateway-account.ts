/**
 * API Gateway's account-wide logging role: the role (AWS's managed policy for it) and the account
 * setting that names it, which the API stage's access and execution logs need. In the stateful
 * stack: it is one per account and region and outlives any service stack, so the service stack is
 * created after it and its replacement never takes the setting away.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { acknowledgeNag } from './nag.ts';

export class ApiGatewayAccount extends Construct {
  readonly cloudWatchRole: Role;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.cloudWatchRole = new Role(this, 'CloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      managedPolicies: [
        ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
      ],
    });
    // Both kept, as CDK keeps those a RestApi makes: other APIs of the account may log through them.
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new CfnAccount(this, 'Account', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    acknowledgeNag(
      this.cloudWatchRole,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "API Gateway's account-level logging role needs exactly this AWS-managed policy (AWS's documented setup); only apigateway.amazonaws.com can assume the role.",
    );
  }
}
