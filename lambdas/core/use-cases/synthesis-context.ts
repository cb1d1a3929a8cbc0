/*
 * What a synthesis engine is shown for a run: the pipeline, the run's base configuration, the
 * bounded windows of signals and executions, the last activation, and for a refinement its
 * chain's evaluation — with the held-out cases (and the signals citing them) left out. The worker
 * generates from it; a run's cost estimate builds the same prompt from it before the run starts.
 */
import { SynthesisFailure } from '../errors.ts';
import { retentionWindow, type TeamSettingsStore } from '../lifecycle.ts';
import type { Clock } from '../ports/common.ts';
import type { EvaluationStore } from '../ports/evaluation.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import type { RunRepository } from '../ports/runs.ts';
import { EXECUTION_WINDOW, SIGNAL_WINDOW, type SynthesisContext } from '../ports/synthesis.ts';
import type { SynthesisRun } from '../schemas/runs.ts';
import { makeReadWindowedEvidence } from './lifecycle.ts';
import { readRefinementEvidence } from './refinement.ts';

export interface SynthesisContextDeps {
  pipelines: PipelineReads;
  settings: TeamSettingsStore;
  clock: Clock;
  /** The chain's runs, for a refinement's evidence. */
  runs: Pick<RunRepository, 'get'>;
  /** The chain's evaluation set and results, for a refinement's evidence. */
  evaluations: Pick<EvaluationStore, 'getSet' | 'listResults' | 'loadExecutions'>;
}

/** The run as its engine sees it; a SynthesisFailure when the pipeline or base is gone. */
export async function readSynthesisContext(
  deps: SynthesisContextDeps,
  run: Pick<SynthesisRun, 'pipelineId' | 'baseConfigurationId' | 'parentRunId' | 'rootRunId'>,
): Promise<SynthesisContext> {
  const { pipelines, settings, clock } = deps;
  const pipeline = await pipelines.getPipeline(run.pipelineId);
  if (!pipeline) throw new SynthesisFailure(`Pipeline ${run.pipelineId} no longer exists.`);
  const baseConfiguration = await pipelines.getConfiguration(run.pipelineId, run.baseConfigurationId);
  if (!baseConfiguration) {
    throw new SynthesisFailure(`Base configuration ${run.baseConfigurationId} no longer exists.`);
  }
  const since = retentionWindow(await settings.get(pipeline.teamId), clock.now()).executionsSince;
  const [windows, activations, refinement] = await Promise.all([
    makeReadWindowedEvidence({ pipelines, settings, clock })(pipeline, {
      signals: SIGNAL_WINDOW,
      executions: EXECUTION_WINDOW,
    }),
    pipelines.listActivations(run.pipelineId, { limit: 1 }),
    readRefinementEvidence(deps, run, since),
  ]);
  // A held-out case is never shown to a refinement: neither its execution nor a signal citing it.
  const hidden = refinement?.heldOutIds ?? new Set<string>();
  const signals = windows.signals.filter(
    // Stryker disable next-line ConditionalExpression: hidden holds execution ids only, so a signal citing none is kept either way
    (signal) => signal.executionId === undefined || !hidden.has(signal.executionId),
  );
  const executions = windows.executions.filter((execution) => !hidden.has(execution.id));
  const context: SynthesisContext = {
    pipeline,
    baseConfiguration,
    signals,
    executions,
    ...(refinement ? { refinement: refinement.evidence } : {}),
  };
  // When the base became active, and what it replaced: evidence older than that is about an
  // earlier configuration (synthesis/evidence/configuration-in-force.ts).
  const [latest] = activations.items;
  if (latest?.configurationId !== baseConfiguration.id) return context;
  const previousConfiguration = await pipelines.getConfiguration(
    run.pipelineId,
    latest.previousConfigurationId,
  );
  return { ...context, activeSince: latest.activatedAt, previousConfiguration };
}
