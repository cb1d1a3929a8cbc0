/* The port of pipelines, their configurations and activations, and the records they receive. */
import type { DomainEvent } from '../events.ts';
import type { Page } from '../schemas/common.ts';
import type { Activation, Configuration, Pipeline, ServingState } from '../schemas/pipelines.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import type { Guardrail, Rollout } from '../schemas/rollouts.ts';
import type { PageRequest } from './common.ts';

/**
 * The active rollout a batch is counted in: its arms, its guardrails (absent for one started before
 * they were kept: its failure counts only) and its current step.
 */
export interface CountedRollout {
  id: string;
  baseConfigurationId: string;
  candidateConfigurationId: string;
  guardrails?: Guardrail[] | undefined;
  step?: number | undefined;
}

/** What a pipeline's history says of one of its configurations, for activating it by hand. */
export interface ConfigurationHistory {
  /** It was the active configuration at some time: an activation made it active, or replaced it. */
  wasActive: boolean;
  /** The latest rollout that had it as candidate and was rolled back, or null. */
  rolledBack: Rollout | null;
}

/**
 * What reading a pipeline needs: the pipeline, its configurations, serving state, activations,
 * history and newest records. A function that only reads is given this, and its bundle holds none
 * of the writes (recording a batch brings the counters, the series and the claims).
 */
export interface PipelineReads {
  /** What serving needs, in one read; null for a pipeline stored before it was kept. */
  getServingState(pipelineId: string): Promise<ServingState | null>;
  getPipeline(id: string): Promise<Pipeline | null>;
  listPipelines(teamId: string, page: PageRequest): Promise<Page<Pipeline>>;
  getConfiguration(pipelineId: string, configurationId: string): Promise<Configuration | null>;
  /**
   * The newest `limit` signals, newest first: one bounded Query, whatever the history size.
   * Nothing older than `since` (the retention window's lower bound, core/lifecycle.ts) is read.
   */
  recentSignals(pipelineId: string, limit: number, since: string): Promise<Signal[]>;
  recentExecutions(pipelineId: string, limit: number, since: string): Promise<Execution[]>;
  /** The pipeline's activations, newest first. */
  listActivations(pipelineId: string, page: PageRequest): Promise<Page<Activation>>;
  /** Whether the configuration was ever active, and the rollback of it as a candidate (Queries, no Scan). */
  configurationHistory(pipelineId: string, configurationId: string): Promise<ConfigurationHistory>;
}

export interface PipelineRepository extends PipelineReads {
  /** Stores the pipeline and its first configuration together. */
  createPipeline(pipeline: Pipeline, configuration: Configuration): Promise<void>;
  /**
   * All or nothing: an id names one signal of a pipeline, so a signal whose id is already recorded
   * there (with any time) is a ConflictError naming it, and nothing of the batch is stored.
   */
  recordSignals(signals: Signal[], retentionDays: number, rollout?: CountedRollout | null): Promise<void>;
  /** As recordSignals: an execution id names one execution of its pipeline. */
  /**
   * Records a batch; with the active rollout, its executions of either arm are added to the
   * rollout's exact counts in the same write (a batch stored once is counted once).
   */
  recordExecutions(
    executions: Execution[],
    retentionDays: number,
    rollout: CountedRollout | null,
  ): Promise<void>;
  /**
   * Makes `activation.configurationId` active, on the condition that the active one is still
   * `activation.previousConfigurationId`; records the activation, its event and what serving
   * reads afterwards. A ConflictError otherwise.
   */
  activateConfiguration(activation: Activation, event: DomainEvent, serving: ServingState): Promise<void>;
}
