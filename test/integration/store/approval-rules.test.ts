import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { nanoid } from 'nanoid';
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../../lambdas/core/events.ts';
import { approvalRulesKey } from '../../../lambdas/store/keys.ts';
import { approvalRulesStoreFromEnv } from '../../../lambdas/wiring/repositories.ts';
import { setUpApiEnvironment } from '../api/harness.ts';

/** Approval rules moved from the data table to the settings table: an upgrade must not loosen them. */
describe('approval rules across the move to the settings table', () => {
  it('reads rules an earlier version stored in the data table, until new rules replace them', async () => {
    const { db, names } = await setUpApiEnvironment();
    const store = approvalRulesStoreFromEnv();
    const pipelineId = nanoid();
    const legacy = {
      pipelineId,
      requireEvaluation: true,
      maxRegressions: 0,
      minEvaluatedCases: 20,
      forbidSelfApproval: true,
      allowApiTokens: false,
      updatedAt: '2026-11-20T00:00:00.000Z',
      updatedBy: 'u1',
    };
    expect(await store.get(pipelineId)).toBeNull();
    await db.send(
      new PutCommand({ TableName: names.Data, Item: { ...approvalRulesKey(pipelineId), ...legacy } }),
    );
    expect(await store.get(pipelineId)).toEqual(legacy);

    const replaced = {
      ...legacy,
      requireEvaluation: false,
      allowApiTokens: true,
      updatedAt: '2026-11-25T00:00:00.000Z',
    };
    await store.put(
      replaced,
      newEvent(
        'approval_rules.updated',
        { teamId: 'team-1', pipelineId, actor: { userId: 'u2', credential: 'session' } },
        { at: replaced.updatedAt, key: nanoid() },
      ),
    );
    expect(await store.get(pipelineId)).toEqual(replaced);
  });
});
