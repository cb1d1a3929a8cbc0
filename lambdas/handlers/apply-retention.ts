/*
 * The scheduled retention job: removes the records that a shortened retention window left outside
 * it (resumable; no Scan), until its time runs short; the next run carries on.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { makeApplyRetention } from '../core/use-cases/lifecycle.ts';
import { logger } from '../observability/logger.ts';
import { lifecycleQueueFromEnv } from '../sqs/lifecycle-queue.ts';
import { getSqsClient } from '../sqs/sqs-queue.ts';
import { systemClock } from '../wiring/clock.ts';
import {
  deletionStoreFromEnv,
  retentionStoreFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';

const applyRetention = makeApplyRetention({
  retention: retentionStoreFromEnv(),
  settings: teamSettingsStoreFromEnv(),
  clock: systemClock,
});

/** Left for the last round of deletes and the checkpoint. */
const SAFETY_MS = 20_000;

const deletions = deletionStoreFromEnv();
const queue = lifecycleQueueFromEnv(getSqsClient());
/** A deletion still pending this long after it was requested lost its job (a DLQ, a refused send). */
const STALLED_AFTER_MS = 30 * 60_000;

export const handler = async (_event: ScheduledEvent, context: Context) => {
  const stalled = await deletions.pendingSince(new Date(Date.now() - STALLED_AFTER_MS).toISOString(), 100);
  // A second job of one deletion is harmless: each step is conditional on the receipt's progress.
  for (const deletionId of stalled) await queue.send({ deletionId });
  if (stalled.length > 0) logger.warn('stalled pipeline deletions queued again', { count: stalled.length });
  const result = await applyRetention(() => context.getRemainingTimeInMillis() < SAFETY_MS);
  if (result.removed > 0 || !result.finished) logger.info('retention applied', result);
  return result;
};
