/*
 * OpenFeature's remote evaluation (OFREP): a pipeline's configuration read as a feature flag. The
 * flag key is the pipeline id, the variant the configuration id, and the arm the one serving gives
 * the same routing key (serving.ts's code, not a copy), so OFREP and serving-configuration agree.
 */
import { createHash } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { PipelineRepository } from '../ports/pipelines.ts';
import type { TeamPipeline, TeamServing } from '../ports/team-serving.ts';
import type { Principal } from '../principal.ts';
import type { Arm, OfrepEvaluation } from '../schemas/ofrep.ts';
import type { Configuration, ServingState } from '../schemas/pipelines.ts';
import { armFor, makeServeConfiguration, matches, type ServingAnswer } from './serving.ts';

/** The most pipelines one bulk evaluation answers (a team with more reads the others one by one). */
export const MAX_BULK_FLAGS = 1_000;
/** Configurations an environment keeps: they are immutable, so a kept one is never stale. */
const KEPT_CONFIGURATIONS = 5_000;

/** Serving's `active` arm is the base arm everywhere a person reads it (docs/decisions.md). */
const ARM_NAMES: Record<ServingAnswer['arm'], Arm> = { active: 'base', candidate: 'candidate' };

/** The flag key names no pipeline the caller may read: one answer for unknown, foreign and deleted. */
export class FlagNotFoundError extends NotFoundError {
  constructor(readonly key: string) {
    super(`No pipeline of your team has the id ${JSON.stringify(key)} (the flag key is the pipeline id).`);
  }
}

/** An OFREP evaluation of a configuration served on an arm of a pipeline (and maybe a rollout). */
export function flagEvaluation(
  pipelineId: string,
  configuration: Configuration,
  arm: ServingAnswer['arm'],
  rolloutId: string | null,
): OfrepEvaluation {
  const { id, version, slots } = configuration;
  return {
    key: pipelineId,
    value: { configurationId: id, version, slots },
    variant: id,
    reason: rolloutId === null ? 'STATIC' : 'SPLIT',
    metadata: {
      ...(rolloutId === null ? {} : { rolloutId }),
      arm: ARM_NAMES[arm],
      version,
    },
  };
}

/** Evaluates one flag: serving's answer for the targeting key, in OFREP's words. */
export function makeEvaluateFlag({ pipelines }: { pipelines: PipelineRepository }, random: () => number) {
  const serve = makeServeConfiguration({ pipelines }, random);
  return async (principal: Principal, key: string, targetingKey: string | undefined) => {
    try {
      const { answer } = await serve(principal, key, targetingKey, undefined);
      if (!answer) throw new FlagNotFoundError(key);
      return flagEvaluation(key, answer.configuration, answer.arm, answer.rolloutId);
    } catch (error) {
      // Another team's pipeline is not found either: a flag key reveals nothing of other teams.
      if (error instanceof ForbiddenError || error instanceof NotFoundError) throw new FlagNotFoundError(key);
      throw error;
    }
  };
}

interface Choice {
  pipelineId: string;
  configurationId: string;
  arm: ServingAnswer['arm'];
  rolloutId: string | null;
}

function choose(pipeline: TeamPipeline, targetingKey: string | undefined, random: () => number): Choice {
  const rollout = pipeline.rollout ?? null;
  const arm = armFor(rollout, targetingKey, random);
  return {
    pipelineId: pipeline.id,
    configurationId:
      arm === 'candidate' && rollout ? rollout.candidateConfigurationId : pipeline.activeConfigurationId,
    arm,
    rolloutId: rollout?.id ?? null,
  };
}

/** Names a bulk answer: configurations are immutable, so the choices say it all. */
function bulkETag(choices: readonly Choice[]): string {
  const hash = createHash('sha256');
  for (const { pipelineId, configurationId, arm, rolloutId } of choices)
    hash.update(`${pipelineId}.${configurationId}.${arm}.${rolloutId ?? 'none'}\n`);
  return `"${hash.digest('base64url').slice(0, 32)}"`;
}

function configurationOf(
  state: ServingState | undefined,
  configurationId: string,
): Configuration | undefined {
  if (state?.active.id === configurationId) return state.active;
  if (state?.rollout?.candidate.id === configurationId) return state.rollout.candidate;
  return undefined;
}

/** Immutable configurations by id, the oldest forgotten first past `KEPT_CONFIGURATIONS`. */
function configurationMemory() {
  const kept = new Map<string, Configuration>();
  return {
    get: (id: string) => kept.get(id),
    keep(configuration: Configuration) {
      kept.set(configuration.id, configuration);
      if (kept.size > KEPT_CONFIGURATIONS) kept.delete(kept.keys().next().value as string);
    },
  };
}

/**
 * Evaluates every pipeline of the caller's team for a context: one Query of the team's pipelines
 * decides the arms and the ETag (a 304 reads nothing else); the configurations come from the
 * environment's memory (they never change) or one BatchGet of the serving items.
 */
export function makeEvaluateFlags(
  { pipelines, teamServing }: { pipelines: PipelineRepository; teamServing: TeamServing },
  random: () => number,
) {
  const memory = configurationMemory();
  const configurationsOf = async (choices: readonly Choice[]) => {
    const missing = choices.filter((choice) => memory.get(choice.configurationId) === undefined);
    if (missing.length === 0) return;
    const states = await teamServing.servingStates(missing.map((choice) => choice.pipelineId));
    await Promise.all(
      missing.map(async ({ pipelineId, configurationId }) => {
        const configuration =
          configurationOf(states.get(pipelineId), configurationId) ??
          (await pipelines.getConfiguration(pipelineId, configurationId));
        if (configuration) memory.keep(configuration);
      }),
    );
  };
  return async (
    principal: Principal,
    targetingKey: string | undefined,
    ifNoneMatch: string | undefined,
  ): Promise<{ etag: string; flags: OfrepEvaluation[] | null }> => {
    const team = await teamServing.teamPipelines(principal.teamId, MAX_BULK_FLAGS);
    const choices = team.map((pipeline) => choose(pipeline, targetingKey, random));
    const etag = bulkETag(choices);
    if (matches(ifNoneMatch, etag)) return { etag, flags: null };
    await configurationsOf(choices);
    const flags = choices.flatMap(({ pipelineId, configurationId, arm, rolloutId }) => {
      const configuration = memory.get(configurationId);
      // None only for a pipeline deleted since the Query read it.
      return configuration ? [flagEvaluation(pipelineId, configuration, arm, rolloutId)] : [];
    });
    return { etag, flags };
  };
}
