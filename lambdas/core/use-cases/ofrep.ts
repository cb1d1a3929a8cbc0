/*
 * OpenFeature's remote evaluation (OFREP): a pipeline's configuration read as a feature flag. The
 * flag key is the pipeline id, the variant the configuration id, and the arm the one serving gives
 * the same routing key (serving.ts's code, not a copy), so OFREP and serving-configuration agree.
 */
import { createHash } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { TeamPipeline, TeamServing } from '../ports/team-serving.ts';
import type { Principal } from '../principal.ts';
import type { Arm, OfrepEvaluation } from '../schemas/ofrep.ts';
import type { Configuration, ServingState } from '../schemas/pipelines.ts';
import { armFor, makeServeConfiguration, type ServingAnswer } from './serving.ts';

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
export function makeEvaluateFlag({ pipelines }: { pipelines: PipelineReads }, random: () => number) {
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

/**
 * How long after a change the team's index may still show the state before it: an answer read
 * within this time gets a provisional ETag, checked against the index again rather than the version.
 */
export const INDEX_SETTLE_MS = 2_000;

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The part of an ETag the version decides: the team, its serving version and the targeting key. */
function versionTag(teamId: string, version: number | null, targetingKey: string | undefined): string {
  return digest(JSON.stringify(['bulk', teamId, version, targetingKey ?? null]));
}

/** The part that names the answer itself: configurations are immutable, so the choices say it all. */
function choicesTag(choices: readonly Choice[]): string {
  return digest(
    choices
      .map(
        ({ pipelineId, configurationId, arm, rolloutId }) =>
          `${pipelineId}.${configurationId}.${arm}.${rolloutId ?? 'none'}`,
      )
      .join('\n'),
  );
}

interface BulkTag {
  version: string;
  choices: string;
  provisional: boolean;
}

/** The bulk ETags an If-None-Match names (weak or strong alike; others, such as `*`, are ignored). */
function bulkTags(ifNoneMatch: string | undefined): BulkTag[] {
  return (ifNoneMatch ?? '').split(',').flatMap((raw) => {
    const parts = /^(?:W\/)?"([\w-]{22})\.([\w-]{22})(\.q)?"$/.exec(raw.trim());
    return parts
      ? [{ version: parts[1] as string, choices: parts[2] as string, provisional: parts[3] !== undefined }]
      : [];
  });
}

const etagOf = ({ version, choices, provisional }: BulkTag) =>
  `"${version}.${choices}${provisional ? '.q' : ''}"`;

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
 * Evaluates every pipeline of the caller's team for a context. The team's serving version (one
 * GetItem) decides a 304: every change to what the team serves bumps it in its own transaction,
 * and it is read before the pipelines, so an ETag never names a state older than its version. An
 * answer read before the team's index can have caught up with the last change (within
 * `INDEX_SETTLE_MS`), or for a team without a version yet, gets a provisional ETag, which the next
 * request checks against the index itself (one Query, as each request did before the version).
 */
export function makeEvaluateFlags(
  { pipelines, teamServing }: { pipelines: PipelineReads; teamServing: TeamServing },
  random: () => number,
  clock: () => number,
) {
  const configurationsOf = configurationReader(pipelines, teamServing);
  return async (
    principal: Principal,
    targetingKey: string | undefined,
    ifNoneMatch: string | undefined,
  ): Promise<{ etag: string; flags: OfrepEvaluation[] | null }> => {
    const { teamId } = principal;
    const sent = bulkTags(ifNoneMatch);
    const stamp = await teamServing.servingVersion(teamId);
    const version = versionTag(teamId, stamp?.version ?? null, targetingKey);
    const current = sent.find((tag) => !tag.provisional && tag.version === version);
    // Without a targeting key the draw is random: the draw the caller holds is still a valid one.
    if (stamp && current) return { etag: etagOf(current), flags: null };
    if (!stamp) await teamServing.startServingVersion(teamId, clock());
    const team = await teamServing.teamPipelines(teamId, MAX_BULK_FLAGS);
    const choices = team.map((pipeline) => choose(pipeline, targetingKey, random));
    const tag: BulkTag = {
      version,
      choices: choicesTag(choices),
      provisional: !stamp || clock() - stamp.changedAt < INDEX_SETTLE_MS,
    };
    if (sent.some((sentTag) => sentTag.version === version && sentTag.choices === tag.choices))
      return { etag: etagOf(tag), flags: null };
    const memory = await configurationsOf(choices);
    const flags = choices.flatMap(({ pipelineId, configurationId, arm, rolloutId }) => {
      const configuration = memory.get(configurationId);
      // None only for a pipeline deleted since the Query read it.
      return configuration ? [flagEvaluation(pipelineId, configuration, arm, rolloutId)] : [];
    });
    return { etag: etagOf(tag), flags };
  };
}

/** Reads the configurations of the choices: kept ones from memory, the others with one BatchGet. */
function configurationReader(pipelines: PipelineReads, teamServing: TeamServing) {
  const memory = configurationMemory();
  return async (choices: readonly Choice[]) => {
    const missing = choices.filter((choice) => memory.get(choice.configurationId) === undefined);
    if (missing.length === 0) return memory;
    const states = await teamServing.servingStates(missing.map((choice) => choice.pipelineId));
    await Promise.all(
      missing.map(async ({ pipelineId, configurationId }) => {
        const configuration =
          configurationOf(states.get(pipelineId), configurationId) ??
          (await pipelines.getConfiguration(pipelineId, configurationId));
        if (configuration) memory.keep(configuration);
      }),
    );
    return memory;
  };
}
