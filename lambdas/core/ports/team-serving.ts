/* The port of a team's serving at once: what OpenFeature's bulk evaluation reads (use-cases/ofrep.ts). */
import type { Pipeline, ServingState } from '../schemas/pipelines.ts';

export interface TeamServing {
  /**
   * The team's pipelines (each with its active configuration and rollout), newest first, at most
   * `limit`: one Query of the team's index, whatever else the team holds.
   */
  teamPipelines(teamId: string, limit: number): Promise<Pipeline[]>;
  /** The serving items of these pipelines, by pipeline id (a deleted pipeline has none). */
  servingStates(pipelineIds: readonly string[]): Promise<Map<string, ServingState>>;
}
