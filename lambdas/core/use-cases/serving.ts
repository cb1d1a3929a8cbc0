/*
 * Serving: what a pipeline runs for a routing key (its active configuration or, inside a rollout's
 * percent, the candidate), with an ETag that lets a caller skip a configuration it already holds.
 */
import { NotFoundError } from '../errors.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import { assertSameTeam, type Principal } from '../principal.ts';
import { servesCandidate } from '../rollouts/routing.ts';
import type { Configuration } from '../schemas/pipelines.ts';
import { loadOwnedPipeline } from './pipelines.ts';

export interface ServingAnswer {
  configuration: Configuration;
  arm: 'active' | 'candidate';
  rolloutId: string | null;
}

/** The ETag of a serving answer: configurations are immutable, so their id, arm and rollout say it all. */
export function servingETag(configurationId: string, arm: string, rolloutId: string | null): string {
  return `"${configurationId}.${arm}.${rolloutId ?? 'none'}"`;
}

/**
 * The arm a routing key gets: the candidate when a rollout is active and the key (or, without one,
 * a random draw) falls in its percent. Serving and OpenFeature's evaluations (ofrep.ts) share it,
 * so a key gets the same arm from both.
 */
export function armFor(
  rollout: { id: string; percent: number } | null | undefined,
  routingKey: string | undefined,
  random: () => number,
): ServingAnswer['arm'] {
  return rollout && servesCandidate(rollout, routingKey, random) ? 'candidate' : 'active';
}

/** True when an If-None-Match header names the ETag (weakly or strongly). */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}`) === true;
}

/**
 * What a pipeline runs for a routing key: one GetItem for the pipeline (which carries its active
 * rollout), and one for the configuration unless the caller's ETag already names it.
 */
export function makeServeConfiguration(
  { pipelines }: { pipelines: PipelineReads },
  random: () => number = Math.random,
) {
  return async (
    principal: Principal,
    pipelineId: string,
    routingKey: string | undefined,
    ifNoneMatch: string | undefined,
  ): Promise<{ etag: string; answer: ServingAnswer | null }> => {
    // One GetItem: the serving item carries the team, the active configuration and the candidate.
    const state = await pipelines.getServingState(pipelineId);
    if (state) {
      assertSameTeam(principal, state.teamId);
      const arm = armFor(state.rollout, routingKey, random);
      const configuration = arm === 'candidate' && state.rollout ? state.rollout.candidate : state.active;
      const rolloutId = state.rollout?.id ?? null;
      const etag = servingETag(configuration.id, arm, rolloutId);
      if (matches(ifNoneMatch, etag)) return { etag, answer: null };
      return { etag, answer: { configuration, arm, rolloutId } };
    }
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const rollout = pipeline.rollout ?? null;
    const arm = armFor(rollout, routingKey, random);
    const configurationId =
      arm === 'candidate' && rollout ? rollout.candidateConfigurationId : pipeline.activeConfigurationId;
    const etag = servingETag(configurationId, arm, rollout?.id ?? null);
    if (matches(ifNoneMatch, etag)) {
      return { etag, answer: null };
    }
    const configuration = await pipelines.getConfiguration(pipelineId, configurationId);
    if (!configuration)
      throw new NotFoundError(`Configuration ${configurationId} of pipeline ${pipelineId} does not exist.`);
    return { etag, answer: { configuration, arm, rolloutId: rollout?.id ?? null } };
  };
}
