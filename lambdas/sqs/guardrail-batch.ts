/*
 * The guardrail queue's batches (lambdas/handlers/judge-rollouts.ts): each rollout a batch names is
 * judged once (a burst of checks for one rollout is one judgement). A check that failed for a
 * moment (throttling, a dropped connection) comes back after a short backoff; one that can never
 * succeed (a body that is no check, a rollout whose configurations are gone) is logged once and
 * dropped: the sweeper judges every active rollout anyway.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ApiError } from '../core/errors.ts';
import type { GuardrailCheck } from '../core/ports/rollouts.ts';
import { type CheckResult, checkKey, guardrailCheckSchema } from '../core/use-cases/guardrail-checks.ts';
import { logger } from '../observability/logger.ts';

/** Backoff of the n-th failed receive: 2, 4, 8, 16 s… at most a minute (the sweeper's period), ±20 %. */
export function guardrailBackoffSeconds(receiveCount: number, random: () => number = Math.random): number {
  const base = 2 ** Math.max(1, Math.min(6, receiveCount));
  return Math.min(60, Math.max(1, Math.round(base * (0.8 + 0.4 * random()))));
}

const describe = (error: unknown) => ({
  errorClass: error instanceof Error ? error.name : typeof error,
  errorMessage: error instanceof Error ? error.message : String(error),
});

/** What the consumer needs: the judge, and hiding a record again for seconds (ChangeMessageVisibility). */
export interface GuardrailBatchDeps {
  judge: (checks: GuardrailCheck[]) => Promise<CheckResult[]>;
  hide: (record: SQSRecord, seconds: number) => Promise<void>;
  /** Recognizes infrastructure faults worth a retry (throttling, 5xx, timeouts, network). */
  isTransient: (error: unknown) => boolean;
}

/**
 * The guardrail queue's SQS handler: parses the checks, judges each rollout once, and reports one
 * record of a rollout whose judgement failed for a moment (hidden for a backoff) as a batch item
 * failure; a permanent failure is logged once and dropped.
 */
export function guardrailBatchHandler({ judge, hide, isTransient }: GuardrailBatchDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const byCheck = new Map<string, { check: GuardrailCheck; records: SQSRecord[] }>();
    for (const record of event.Records) {
      let body: unknown;
      try {
        body = JSON.parse(record.body);
      } catch {
        body = undefined;
      }
      const parsed = guardrailCheckSchema.safeParse(body);
      if (!parsed.success) {
        logger.error('dropping a message that is not a guardrail check', { messageId: record.messageId });
        continue;
      }
      const key = checkKey(parsed.data);
      const entry = byCheck.get(key) ?? { check: parsed.data, records: [] };
      entry.records.push(record);
      byCheck.set(key, entry);
    }
    const results = await judge([...byCheck.values()].map((entry) => entry.check));
    const failures: Array<{ itemIdentifier: string }> = [];
    for (const result of results) {
      const records = byCheck.get(checkKey(result.check))?.records ?? [];
      const ids = { ...result.check, checks: records.length };
      if ('outcome' in result) {
        const { action, reason } = result.outcome;
        if (action === 'kept' || action === 'not_active')
          logger.debug('guardrail check', { ...ids, action, reason });
        else logger.info('rollout judged by its guardrail', { ...ids, action, reason });
        continue;
      }
      const transient = !(result.error instanceof ApiError) && isTransient(result.error);
      if (!transient) {
        logger.error('guardrail check failed for good; the sweeper judges the rollout on its next pass', {
          ...ids,
          ...describe(result.error),
        });
        continue;
      }
      // One record of the rollout comes back; its duplicates in this batch are done with.
      const record = records[0];
      if (!record) continue;
      const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
      const retryInSeconds = guardrailBackoffSeconds(receiveCount);
      logger.warn('guardrail check failed; it will be retried', {
        ...ids,
        messageId: record.messageId,
        receiveCount,
        retryInSeconds,
        ...describe(result.error),
      });
      try {
        await hide(record, retryInSeconds);
      } catch (visibilityError) {
        logger.warn('could not shorten the visibility timeout; the check waits for the queue default', {
          ...ids,
          messageId: record.messageId,
          errorClass: describe(visibilityError).errorClass,
        });
      }
      failures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures: failures };
  };
}
