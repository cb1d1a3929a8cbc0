/* The port of a team's serving at once: what OpenFeature's bulk evaluation reads (use-cases/ofrep.ts). */
import type { ServingState } from '../schemas/pipelines.ts';

/** What routing a pipeline needs: its active configuration and its active rollout, if any. */
export interface TeamPipeline {
  id: string;
  activeConfigurationId: string;
  rollout: { id: string; percent: number; candidateConfigurationId: string } | null;
}

export interface TeamServing {
  /**
   * The team's pipelines, newest first, at most `limit`: one Query of the team's index reading
   * only what routing needs, whatever else the team holds.
   */
  teamPipelines(teamId: string, limit: number): Promise<TeamPipeline[]>;
  /** The serving items of these pipelines, by pipeline id (a deleted pipeline has none). */
  servingStates(pipelineIds: readonly string[]): Promise<Map<string, ServingState>>;
}
