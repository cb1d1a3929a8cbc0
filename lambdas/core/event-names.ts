/*
 * The audit log in words: each event read with its pipeline's name and its configuration's version
 * beside the ids, looked up once per distinct id of the page (GetItems in parallel, bounded by the
 * page's size), so a reader sees "pipeline support bot · version 3", never bare ids.
 */
import type { DomainEvent } from './events.ts';
import type { PipelineReads } from './ports/pipelines.ts';

/** What a deleted pipeline is called in its team's log. */
export const DELETED_PIPELINE = 'a deleted pipeline';

/** The page's events with pipelineName and configurationVersion set where they name one. */
export async function nameEventResources(
  pipelines: Pick<PipelineReads, 'getPipeline' | 'getConfiguration'>,
  events: DomainEvent[],
): Promise<DomainEvent[]> {
  const pipelineIds = [
    ...new Set(events.flatMap((event) => (event.data.pipelineId ? [event.data.pipelineId] : []))),
  ];
  const configurations = [
    ...new Map(
      events.flatMap(({ data }) =>
        data.pipelineId && data.configurationId
          ? [[`${data.pipelineId}/${data.configurationId}`, [data.pipelineId, data.configurationId] as const]]
          : [],
      ),
    ).values(),
  ];
  const [foundPipelines, foundConfigurations] = await Promise.all([
    Promise.all(pipelineIds.map((id) => pipelines.getPipeline(id))),
    Promise.all(configurations.map(([pipelineId, id]) => pipelines.getConfiguration(pipelineId, id))),
  ]);
  const nameOf = new Map(
    pipelineIds.map((id, index) => [id, foundPipelines[index]?.name ?? DELETED_PIPELINE]),
  );
  const versionOf = new Map(
    configurations.map(([pipelineId, id], index) => [
      `${pipelineId}/${id}`,
      foundConfigurations[index]?.version,
    ]),
  );
  return events.map((event) => {
    const { pipelineId, configurationId } = event.data;
    const version =
      pipelineId && configurationId ? versionOf.get(`${pipelineId}/${configurationId}`) : undefined;
    return {
      ...event,
      data: {
        ...event.data,
        ...(pipelineId ? { pipelineName: nameOf.get(pipelineId) ?? DELETED_PIPELINE } : {}),
        ...(version !== undefined ? { configurationVersion: version } : {}),
      },
    };
  });
}
