/* Pipelines and their evidence intake: create, list and read pipelines and configurations,
   record signals and executions for the team that owns the pipeline. */
import { NotFoundError } from '../errors.ts';
import { assertInsideWindow, retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock, IdGenerator, PageRequest } from '../ports/common.ts';
import type { PipelineReads, PipelineRepository } from '../ports/pipelines.ts';
import type { GuardrailCheck, GuardrailQueue } from '../ports/rollouts.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import { guardrailCheckOf, guardrailCheckOfSignals } from '../rollouts/guardrails.ts';
import type { Configuration, CreatePipelineBody, Pipeline } from '../schemas/pipelines.ts';
import type { Execution, ExecutionInput, Signal, SignalInput } from '../schemas/records.ts';

export interface PipelineDeps {
  pipelines: PipelineRepository;
  clock: Clock;
  ids: IdGenerator;
}

/** What recording needs: the team's retention windows (records outside them are refused, and expire with them). */
export interface RecordDeps extends PipelineDeps {
  settings: TeamSettingsStore;
}

/**
 * What recording executions needs besides: recording executions of an active rollout's arms asks
 * for the rollout to be judged (one message a batch, sent while the batch is written).
 */
export interface RecordExecutionsDeps extends RecordDeps {
  guardrails: {
    queue: GuardrailQueue;
    /** A send that failed: the recording still succeeds (the sweeper is the backstop); log it once. */
    unsent: (check: GuardrailCheck, error: unknown) => void;
  };
}

/** The team's settings and windows: a record's own window is checked and set as its TTL. */
async function windowOf(settings: TeamSettingsStore, teamId: string, now: Date) {
  const team = await settings.get(teamId);
  return { team, window: retentionWindow(team, now) };
}

/** The pipeline if it exists (404) and belongs to the caller's team (403). */
export async function loadOwnedPipeline(
  pipelines: PipelineReads,
  principal: Principal,
  pipelineId: string,
): Promise<Pipeline> {
  const pipeline = await pipelines.getPipeline(pipelineId);
  if (!pipeline) throw new NotFoundError(`Pipeline ${pipelineId} does not exist.`);
  assertSameTeam(principal, pipeline.teamId);
  return pipeline;
}

/** A configuration of the pipeline (404 when it does not exist). */
export async function loadConfiguration(
  pipelines: PipelineReads,
  pipelineId: string,
  configurationId: string,
): Promise<Configuration> {
  const configuration = await pipelines.getConfiguration(pipelineId, configurationId);
  if (!configuration) {
    throw new NotFoundError(`Configuration ${configurationId} of pipeline ${pipelineId} does not exist.`);
  }
  return configuration;
}

/** Creates a pipeline with its first configuration (version 1). */
export function makeCreatePipeline({ pipelines, clock, ids }: PipelineDeps) {
  return async (principal: Principal, body: CreatePipelineBody): Promise<Pipeline> => {
    assertCanWrite(principal);
    const createdAt = clock.now().toISOString();
    const pipelineId = ids.newId();
    const configuration: Configuration = {
      id: ids.newId(),
      pipelineId,
      version: 1,
      slots: body.slots,
      source: 'manual',
      createdAt,
      createdBy: principal.userId,
    };
    const pipeline: Pipeline = {
      id: pipelineId,
      teamId: principal.teamId,
      name: body.name,
      activeConfigurationId: configuration.id,
      createdAt,
      rollout: null,
    };
    await pipelines.createPipeline(pipeline, configuration);
    return pipeline;
  };
}

/** Lists the caller's team's pipelines, newest first. */
export function makeListPipelines({ pipelines }: { pipelines: PipelineReads }) {
  return (principal: Principal, page: PageRequest) => pipelines.listPipelines(principal.teamId, page);
}

/** One pipeline of the caller's team. */
export function makeGetPipeline({ pipelines }: { pipelines: PipelineReads }) {
  return (principal: Principal, pipelineId: string) => loadOwnedPipeline(pipelines, principal, pipelineId);
}

/** One configuration of a pipeline of the caller's team. */
export function makeGetConfiguration({ pipelines }: { pipelines: PipelineReads }) {
  return async (
    principal: Principal,
    pipelineId: string,
    configurationId: string,
  ): Promise<Configuration> => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    return loadConfiguration(pipelines, pipelineId, configurationId);
  };
}

/**
 * What recording signals needs besides: a batch that scores executions on a signal an active
 * rollout guards asks for the rollout to be judged (without it, the sweeper judges it within a minute).
 */
export interface RecordSignalsDeps extends RecordDeps {
  guardrails?: RecordExecutionsDeps['guardrails'];
}

/** Records a batch of signals, all or nothing; the server fills in ids and times not given. */
export function makeRecordSignals({ pipelines, clock, ids, settings, guardrails }: RecordSignalsDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    inputs: Array<SignalInput & Partial<Pick<Signal, 'recordedBy' | 'recordedByName'>>>,
  ): Promise<Signal[]> => {
    assertCanWrite(principal);
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const at = clock.now();
    const now = at.toISOString();
    const signals: Signal[] = inputs.map((input) => ({
      ...input,
      id: input.id ?? ids.newId(),
      occurredAt: input.occurredAt ?? now,
      pipelineId,
    }));
    const retention = await windowOf(settings, pipeline.teamId, at);
    assertInsideWindow(
      signals.map((signal) => ({ id: signal.id, at: signal.occurredAt })),
      retention.window.signalsSince,
      { what: 'signal', days: retention.team.signalRetentionDays, field: 'occurredAt' },
    );
    const check = guardrails ? guardrailCheckOfSignals(pipeline, signals) : null;
    await Promise.all([
      pipelines.recordSignals(signals, retention.team.signalRetentionDays, pipeline.rollout ?? null),
      guardrails && check ? askForJudgement(guardrails, check, pipeline.teamId) : undefined,
    ]);
    return signals;
  };
}

/** Sends the check; a refused send is reported, never thrown (it must not fail the recording). */
async function askForJudgement(
  guardrails: RecordExecutionsDeps['guardrails'],
  check: GuardrailCheck,
  teamId: string,
): Promise<void> {
  try {
    await guardrails.queue.send(check, teamId);
  } catch (error) {
    guardrails.unsent(check, error);
  }
}

/** Records a batch of executions; an execution without a configuration ran the active one. */
export function makeRecordExecutions({ pipelines, clock, ids, settings, guardrails }: RecordExecutionsDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    inputs: Array<ExecutionInput & Pick<Execution, 'source'>>,
  ): Promise<Execution[]> => {
    assertCanWrite(principal);
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const at = clock.now();
    const now = at.toISOString();
    const executions: Execution[] = inputs.map((input) => ({
      ...input,
      id: input.id ?? ids.newId(),
      startedAt: input.startedAt ?? now,
      configurationId: input.configurationId ?? pipeline.activeConfigurationId,
      pipelineId,
    }));
    const retention = await windowOf(settings, pipeline.teamId, at);
    assertInsideWindow(
      executions.map((execution) => ({ id: execution.id, at: execution.startedAt })),
      retention.window.executionsSince,
      { what: 'execution', days: retention.team.executionRetentionDays, field: 'startedAt' },
    );
    const check = guardrailCheckOf(pipeline, executions);
    // The check travels while the batch is written: the answer waits for the slower of the two.
    await Promise.all([
      pipelines.recordExecutions(executions, retention.team.executionRetentionDays, pipeline.rollout ?? null),
      check ? askForJudgement(guardrails, check, pipeline.teamId) : undefined,
    ]);
    return executions;
  };
}
