/*
 * The deploy's backfill (lib/usage-key-backfill.ts), as the Provider framework calls it: onEvent
 * runs one pass of backfillUsageKeys within the function's time, and isComplete another while the
 * last one left teams, answering done once no team is without its key on the plan. Delete does
 * nothing: the keys stay with their teams (a new plan takes them up).
 */
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { backfillUsageKeys, makeEnsureTeamUsageKey } from '../auth/usage-keys.ts';
import { logger } from '../observability/logger.ts';
import { systemClock } from '../wiring/clock.ts';
import { teamUsageKeyStoreFromEnv } from '../wiring/repositories.ts';
import { usageKeyRegistryFromEnv } from '../wiring/usage-key-registry.ts';

/** Stop a pass this long before the function's timeout, leaving time to answer. */
const MARGIN_MS = 30_000;

const store = teamUsageKeyStoreFromEnv();
const registry = usageKeyRegistryFromEnv();
const ensure = makeEnsureTeamUsageKey({ store, registry });

async function pass(context: Context): Promise<boolean> {
  const outcome = await backfillUsageKeys({
    store,
    ensure,
    planId: registry.planId,
    clock: systemClock,
    deadline: systemClock.now().getTime() + context.getRemainingTimeInMillis() - MARGIN_MS,
  });
  logger.info('usage key backfill pass', { ...outcome, usagePlanId: registry.planId });
  return outcome.done;
}

/** A Provider framework event: isComplete's carries onEvent's answer (IsComplete among it). */
export type BackfillEvent = CloudFormationCustomResourceEvent & { IsComplete?: boolean };

export async function handler(
  event: BackfillEvent,
  context: Context,
): Promise<{ PhysicalResourceId: string; IsComplete: boolean }> {
  // A deletion keeps its id (the framework refuses another), whichever plan this function now has.
  if (event.RequestType === 'Delete')
    return { PhysicalResourceId: event.PhysicalResourceId, IsComplete: true };
  const physicalResourceId = `usage-keys-${registry.planId}`;
  // isComplete right after an onEvent pass that finished: nothing is left to do.
  if (event.IsComplete === true) return { PhysicalResourceId: physicalResourceId, IsComplete: true };
  return { PhysicalResourceId: physicalResourceId, IsComplete: await pass(context) };
}
