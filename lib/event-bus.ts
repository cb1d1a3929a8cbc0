/** Who besides the stack may use its event bus: the consumer accounts, for their own rules only. */
import { Stack } from 'aws-cdk-lib';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import { AccountPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';

/** 12-digit AWS account ids only: a typo must fail `cdk synth`, not open the bus to a wrong principal. */
const ACCOUNT_ID = /^\d{12}$/;

/** Lets `consumerAccounts` (and no other account) create rules on the bus routing its events to themselves. */
export function shareEventBus(eventBus: EventBus, consumerAccounts: readonly string[]): void {
  const accounts = [...new Set(consumerAccounts)];
  for (const account of accounts) {
    if (!ACCOUNT_ID.test(account))
      throw new Error(`eventBusConsumerAccounts: '${account}' is not a 12-digit account id.`);
  }
  if (accounts.length === 0) return;
  const stack = Stack.of(eventBus);
  // The consumer accounts manage only rules they create themselves on this bus.
  eventBus.addToResourcePolicy(
    new PolicyStatement({
      sid: 'ConsumerAccountsManageTheirRules',
      principals: accounts.map((account) => new AccountPrincipal(account)),
      actions: [
        'events:PutRule',
        'events:PutTargets',
        'events:DeleteRule',
        'events:RemoveTargets',
        'events:DisableRule',
        'events:EnableRule',
        'events:DescribeRule',
        'events:ListTargetsByRule',
      ],
      resources: [
        stack.formatArn({ service: 'events', resource: 'rule', resourceName: `${eventBus.eventBusName}/*` }),
      ],
      // An IAM policy variable, not a template placeholder.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: IAM resolves ${aws:PrincipalAccount}
      conditions: { StringEqualsIfExists: { 'events:creatorAccount': '${aws:PrincipalAccount}' } },
    }),
  );
}
