/* Pipelines and their evidence intake: create, list and read pipelines and configurations,
   record signals and executions for the team that owns the pipeline. */
import { NotFoundError } from '../errors.ts';
import type { Clock, IdGenerator, PageRequest, PipelineRepository } from '../ports.ts';
import { assertCanWrite, assertSameTeam, type Principal } from '../principal.ts';
import type {
  Configuration,
  CreatePipelineBody,
  Execution,
  ExecutionInput,
  Pipeline,
  Signal,
  SignalInput,
} from '../schemas.ts';

export interface PipelineDeps {
  pipelines: PipelineRepository;
  clock: Clock;
  ids: IdGenerator;
}

/** The pipeline if it exists (404) and belongs to the caller's team (403). */
export async function loadOwnedPipeline(
  pipelines: PipelineRepository,
  principal: Principal,
  pipelineId: string,
): Promise<Pipeline> {
  const pipeline = await pipelines.getPipeline(pipelineId);
  if (!pipeline) throw new NotFoundError(`Pipeline ${pipelineId} does not exist.`);
  assertSameTeam(principal, pipeline.teamId);
  return pipeline;
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
export function makeListPipelines({ pipelines }: Pick<PipelineDeps, 'pipelines'>) {
  return (principal: Principal, page: PageRequest) => pipelines.listPipelines(principal.teamId, page);
}

/** One pipeline of the caller's team. */
export function makeGetPipeline({ pipelines }: Pick<PipelineDeps, 'pipelines'>) {
  return (principal: Principal, pipelineId: string) => loadOwnedPipeline(pipelines, principal, pipelineId);
}

/** One configuration of a pipeline of the caller's team. */
export function makeGetConfiguration({ pipelines }: Pick<PipelineDeps, 'pipelines'>) {
  return async (
    principal: Principal,
    pipelineId: string,
    configurationId: string,
  ): Promise<Configuration> => {
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    const configuration = await pipelines.getConfiguration(pipelineId, configurationId);
    if (!configuration) {
      throw new NotFoundError(`Configuration ${configurationId} of pipeline ${pipelineId} does not exist.`);
    }
    return configuration;
  };
}

/** Records a batch of signals, all or nothing; the server fills in ids and times not given. */
export function makeRecordSignals({ pipelines, clock, ids }: PipelineDeps) {
  return async (principal: Principal, pipelineId: string, inputs: SignalInput[]): Promise<Signal[]> => {
    assertCanWrite(principal);
    await loadOwnedPipeline(pipelines, principal, pipelineId);
    const now = clock.now().toISOString();
    const signals: Signal[] = inputs.map((input) => ({
      ...input,
      id: input.id ?? ids.newId(),
      occurredAt: input.occurredAt ?? now,
      pipelineId,
    }));
    await pipelines.recordSignals(signals);
    return signals;
  };
}

/** Records a batch of executions; an execution without a configuration ran the active one. */
export function makeRecordExecutions({ pipelines, clock, ids }: PipelineDeps) {
  return async (principal: Principal, pipelineId: string, inputs: ExecutionInput[]): Promise<Execution[]> => {
    assertCanWrite(principal);
    const pipeline = await loadOwnedPipeline(pipelines, principal, pipelineId);
    const now = clock.now().toISOString();
    const executions: Execution[] = inputs.map((input) => ({
      ...input,
      id: input.id ?? ids.newId(),
      startedAt: input.startedAt ?? now,
      configurationId: input.configurationId ?? pipeline.activeConfigurationId,
      pipelineId,
    }));
    await pipelines.recordExecutions(executions);
    return executions;
  };
}
