/* The port of a team's serving at once: what OpenFeature's bulk evaluation reads (use-cases/ofrep.ts). */
import type { ServingState } from '../schemas/pipelines.ts';

/** What routing a pipeline needs: its active configuration and its active rollout, if any. */
export interface TeamPipeline {
  id: string;
  activeConfigurationId: string;
  rollout: { id: string; percent: number; candidateConfigurationId: string } | null;
}

/** The team's serving version and when it last moved (epoch milliseconds). */
export interface ServingVersion {
  version: number;
  changedAt: number;
}

export interface TeamServing {
  /**
   * The team's serving version, read strongly consistent (one GetItem): every write that changes
   * what the team's pipelines serve bumps it in its own transaction. None for a team whose
   * pipelines have not changed since the version was introduced.
   */
  servingVersion(teamId: string): Promise<ServingVersion | null>;
  /** Creates the version of a team that has none (a no-op if a write created it meanwhile). */
  startServingVersion(teamId: string, at: number): Promise<void>;
  /**
   * The team's pipelines, newest first, at most `limit`: one Query of the team's index reading
   * only what routing needs, whatever else the team holds.
   */
  teamPipelines(teamId: string, limit: number): Promise<TeamPipeline[]>;
  /** The serving items of these pipelines, by pipeline id (a deleted pipeline has none). */
  servingStates(pipelineIds: readonly string[]): Promise<Map<string, ServingState>>;
}
