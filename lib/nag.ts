import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export type AwsSolutionsRule = `AwsSolutions-${string}`;

/**
 * Acknowledges one cdk-nag AwsSolutions finding on the construct that triggers it (and its
 * children). The `AwsSolutions::` prefix is the plugin namespace CDK's validation report uses, so
 * each acknowledgement and its reason also appear in cdk.out/validation-report.json.
 */
export function acknowledgeNag(scope: IConstruct, rule: AwsSolutionsRule, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::${rule}`, reason });
}
