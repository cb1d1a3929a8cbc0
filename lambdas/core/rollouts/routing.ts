/*
 * Which arm of a rollout serves a routing key: a hash of the rollout id and the key, so the same
 * key always gets the same arm within a rollout, and a new rollout draws afresh.
 */
import { createHash } from 'node:crypto';

/** Where a routing key falls in [0, 100): the first 32 bits of SHA-256(rolloutId, key). */
export function routingPoint(rolloutId: string, routingKey: string): number {
  const digest = createHash('sha256').update(rolloutId).update('\u0000').update(routingKey).digest();
  return (digest.readUInt32BE(0) / 2 ** 32) * 100;
}

/** True when the key (or, without one, a random draw) falls in the candidate's `percent`. */
export function servesCandidate(
  rollout: { id: string; percent: number },
  routingKey: string | undefined,
  random: () => number = Math.random,
): boolean {
  const point = routingKey === undefined ? random() * 100 : routingPoint(rollout.id, routingKey);
  return point < rollout.percent;
}
