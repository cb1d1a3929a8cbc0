/*
 * One request's reads of its pipeline and its team's settings, made once: a use case that records
 * through others (the OTLP ingest through POST …/executions' and …/signals' use cases) reads each
 * once a request, as each JSON endpoint does, instead of once a use case.
 */
import type { TeamSettingsStore } from '../core/lifecycle.ts';
import type { PipelineRepository } from '../core/ports/pipelines.ts';

const once = <T>(read: (key: string) => Promise<T>) => {
  const reads = new Map<string, Promise<T>>();
  return (key: string) => {
    let pending = reads.get(key);
    if (!pending) {
      pending = read(key);
      reads.set(key, pending);
    }
    return pending;
  };
};

/** The repository and settings store for one request: each pipeline and team read at most once. */
export function readOnce(pipelines: PipelineRepository, settings: TeamSettingsStore) {
  return {
    pipelines: { ...pipelines, getPipeline: once((id) => pipelines.getPipeline(id)) },
    settings: { ...settings, get: once((teamId) => settings.get(teamId)) },
  };
}
