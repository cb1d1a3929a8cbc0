/**
 * The deploy's backfill as the Provider framework calls it: a pass gives the teams without a key on
 * the plan theirs and says whether any is left, isComplete after a finished pass does nothing, and a
 * deletion keeps its id and touches nothing. DynamoDB and API Gateway are aws-sdk-client-mock's.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
} from '@aws-sdk/client-api-gateway';
import { DynamoDBDocumentClient, GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BackfillEvent } from '../../../lambdas/handlers/provision-usage-keys.ts';

const dynamo = mockClient(DynamoDBDocumentClient);
const apiGateway = mockClient(APIGatewayClient);
const PLAN = 'plan1a';
let handler: (
  event: BackfillEvent,
  context: Context,
) => Promise<{ PhysicalResourceId: string; IsComplete: boolean }>;

const context = { getRemainingTimeInMillis: () => 600_000 } as Context;
const event = (fields: Partial<BackfillEvent>) =>
  ({
    RequestType: 'Create',
    ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:framework',
    ResponseURL: 'https://cloudformation-response.example/',
    StackId: 'stack',
    RequestId: 'request',
    LogicalResourceId: 'Backfill',
    ResourceType: 'Custom::UsageKeyBackfill',
    ResourceProperties: { ServiceToken: 'token', usagePlanId: PLAN },
    ...fields,
  }) as BackfillEvent;

beforeAll(async () => {
  Object.assign(process.env, {
    AUTH_TABLE: 'auth',
    USAGE_PLAN_ID: PLAN,
    AWS_REGION: 'us-east-1',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  ({ handler } = await import('../../../lambdas/handlers/provision-usage-keys.ts'));
});

beforeEach(() => {
  dynamo.reset();
  apiGateway.reset();
});

describe('provision-usage-keys', () => {
  it('gives each team without a key on the plan its key, and answers done when none is left', async () => {
    dynamo.on(ScanCommand).resolves({ Items: [{ teamId: 'team-a' }, { teamId: 'team-b' }] });
    dynamo.on(GetCommand).resolves({});
    dynamo.on(UpdateCommand).resolves({});
    apiGateway.on(GetApiKeysCommand).resolves({ items: [] });
    apiGateway
      .on(CreateApiKeyCommand, { name: `${PLAN}-team-a` })
      .resolves({ id: 'ka', value: 'value-a' })
      .on(CreateApiKeyCommand, { name: `${PLAN}-team-b` })
      .resolves({ id: 'kb', value: 'value-b' });
    apiGateway.on(CreateUsagePlanKeyCommand).resolves({});

    const answer = await handler(event({}), context);

    expect(answer).toEqual({ PhysicalResourceId: `usage-keys-${PLAN}`, IsComplete: true });
    expect(
      apiGateway.commandCalls(CreateUsagePlanKeyCommand).map((call) => call.args[0].input.keyId),
    ).toEqual(['ka', 'kb']);
    expect(
      dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input.ExpressionAttributeValues),
    ).toEqual([
      { ':id': 'ka', ':value': 'value-a', ':plan': PLAN },
      { ':id': 'kb', ':value': 'value-b', ':plan': PLAN },
    ]);
  });

  it('does nothing in isComplete after an onEvent pass that finished', async () => {
    const answer = await handler(
      event({ IsComplete: true, PhysicalResourceId: `usage-keys-${PLAN}` } as Partial<BackfillEvent>),
      context,
    );

    expect(answer).toEqual({ PhysicalResourceId: `usage-keys-${PLAN}`, IsComplete: true });
    expect(dynamo.calls()).toHaveLength(0);
    expect(apiGateway.calls()).toHaveLength(0);
  });

  it('keeps the id of a deletion (an older plan’s) and leaves every key where it is', async () => {
    const answer = await handler(
      event({ RequestType: 'Delete', PhysicalResourceId: 'usage-keys-oldplan' } as Partial<BackfillEvent>),
      context,
    );

    expect(answer).toEqual({ PhysicalResourceId: 'usage-keys-oldplan', IsComplete: true });
    expect(dynamo.calls()).toHaveLength(0);
    expect(apiGateway.calls()).toHaveLength(0);
  });
});
