/* The port of a synthesis engine: what it is shown, and the proposal it answers. */
import type { SpentUsage } from '../errors.ts';
import type { RefinementEvidence } from '../refinement.ts';
import type { Configuration, Pipeline, Slot } from '../schemas/pipelines.ts';
import type { Execution, Signal } from '../schemas/records.ts';
import type { Change, Confidence, Diagnosis, StructuredWarning } from '../schemas/runs.ts';

/** What a synthesis handler sees: the base configuration and bounded windows of evidence. */
export interface SynthesisContext {
  pipeline: Pipeline;
  baseConfiguration: Configuration;
  /** Newest first, at most SIGNAL_WINDOW. */
  signals: Signal[];
  /** Newest first, at most EXECUTION_WINDOW. */
  executions: Execution[];
  /** When the base configuration became active (its activation), if it was activated after creation. */
  activeSince?: string | null;
  /** The configuration the base replaced, when known: which settings the last activation changed. */
  previousConfiguration?: Configuration | null;
  /** A refinement's evidence: its chain's earlier rounds and their evaluation (held-out cases left out). */
  refinement?: RefinementEvidence;
}

/** What generating a run cost: the model, its tokens over all requests, the requests made. */
export type SynthesisUsage = SpentUsage;

/** A finished proposal: references already mapped and checked by code, never by the model. */
export interface SynthesisProposal {
  diagnosis: Diagnosis;
  changes: Change[];
  structuredWarnings: StructuredWarning[];
  confidence: Confidence;
  analyzedSignalIds: string[];
  analyzedExecutionIds: string[];
  proposedSlots: Slot[];
  usage?: SynthesisUsage;
}

export interface SynthesisEngine {
  readonly name: string;
  generate(context: SynthesisContext): Promise<SynthesisProposal>;
}

export const SIGNAL_WINDOW = 200;
export const EXECUTION_WINDOW = 200;
