/**
 * The pipeline page's "Over time" section: over 24 h, 7 d or 30 d (GET …/metrics, the whole and
 * per configuration), a chart each of the failure rate, the p95 duration, the tokens per execution
 * and each score kind, with the activations and rollouts of the range numbered on every chart.
 */
import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { LineChart, type Marker } from '../charts/line-chart.tsx';
import {
  type Annotation,
  annotationBy,
  chartMetrics,
  linesOf,
  type MetricsAnswer,
  RANGES,
  type RangeName,
  rangeQuery,
  versionsOf,
} from '../charts/series.ts';
import { ErrorNotice, Loading, Time, useLoad } from '../ui.tsx';

/** The most configurations whose versions are read one by one (those no annotation names). */
const MAX_CONFIGURATIONS_READ = 8;

type MetricsQuery = ReturnType<typeof rangeQuery> & { groupBy?: 'configuration' };

function getMetrics(pipelineId: string, query: MetricsQuery): Promise<MetricsAnswer> {
  const path = { pipelineId };
  // biome-ignore format: until the operation's client is generated
  // @ts-expect-error until the operation's client is generated
  return api(client.GET('/pipelines/{pipelineId}/metrics', { params: { path, query } })) as Promise<MetricsAnswer>;
}

async function loadMetrics(pipelineId: string, range: RangeName, known: ReadonlyMap<string, number>) {
  const query = rangeQuery(range, Date.now());
  const [whole, byConfiguration] = await Promise.all([
    getMetrics(pipelineId, query),
    getMetrics(pipelineId, { ...query, groupBy: 'configuration' }),
  ]);
  const versions = versionsOf(whole.annotations, known);
  const unknown = byConfiguration.series
    .map((series) => series.configurationId)
    .filter((id): id is string => id !== undefined && !versions.has(id))
    .slice(0, MAX_CONFIGURATIONS_READ);
  // A configuration retention removed reads as the start of its id.
  const read = await Promise.all(
    unknown.map((configurationId) =>
      api(
        client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
          params: { path: { pipelineId, configurationId } },
        }),
      ).catch(() => undefined),
    ),
  );
  for (const configuration of read) if (configuration) versions.set(configuration.id, configuration.version);
  return { whole, byConfiguration, versions };
}

/** An annotation in words: its label and who made the change. */
const markerWords = (annotation: Annotation) => `${annotation.label} (by ${annotationBy(annotation)})`;

export function MetricsCharts({
  pipelineId,
  active,
}: {
  pipelineId: string;
  active: { id: string; version: number };
}) {
  const [range, setRange] = useState<RangeName>('24h');
  const loaded = useLoad(
    () => loadMetrics(pipelineId, range, new Map([[active.id, active.version]])),
    [pipelineId, range, active.id],
  );
  return (
    <section aria-labelledby="over-time" class="over-time">
      <h2 id="over-time">Over time</h2>
      <fieldset class="range-picker">
        <legend>Range</legend>
        {(Object.keys(RANGES) as RangeName[]).map((name) => (
          <label key={name}>
            <input
              type="radio"
              name="metrics-range"
              value={name}
              checked={range === name}
              onChange={() => setRange(name)}
            />
            {RANGES[name].label}
          </label>
        ))}
      </fieldset>
      <ErrorNotice error={loaded.error} />
      {loaded.data ? (
        <Charts {...loaded.data} range={range} busy={loaded.loading} />
      ) : loaded.error ? null : (
        <Loading what="the charts" />
      )}
    </section>
  );
}

function Charts(props: {
  whole: MetricsAnswer;
  byConfiguration: MetricsAnswer;
  versions: Map<string, number>;
  range: RangeName;
  busy: boolean;
}) {
  const { whole, byConfiguration, versions } = props;
  const words = RANGES[props.range].words;
  const buckets = whole.series[0]?.buckets ?? [];
  const times = buckets.map((bucket) => bucket.at);
  const markers: Marker[] = [...whole.annotations]
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .map((annotation, index) => ({ number: index + 1, at: annotation.at, words: markerWords(annotation) }));
  const lines = linesOf(whole, byConfiguration, versions);
  const recorded = buckets.some(
    (bucket) => bucket.executions > 0 || Object.values(bucket.scores).some((score) => score.count > 0),
  );
  return (
    <div aria-busy={props.busy}>
      {markers.length > 0 ? (
        <>
          <h3 id="changes-in-range">Changes in {words}</h3>
          <ol class="chart-markers" aria-labelledby="changes-in-range">
            {[...whole.annotations]
              .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
              .map((annotation, index) => (
                <li key={`${annotation.at}-${annotation.type}-${annotation.configurationId}`}>
                  <span class="marker-number">{index + 1}</span> <Time iso={annotation.at} />:{' '}
                  {annotation.label}, by {annotationBy(annotation)}
                </li>
              ))}
          </ol>
        </>
      ) : null}
      {recorded ? (
        <p class="muted small">
          Hover or tap a chart, or focus it and use ← →, to read each point; each chart's table has every
          figure.
        </p>
      ) : null}
      {recorded ? (
        <div class="series-charts">
          {chartMetrics(whole).map((metric, index) => (
            <LineChart
              key={metric.id}
              id={`chart-${index}`}
              metric={metric}
              lines={lines}
              times={times}
              step={whole.step}
              markers={markers}
              rangeWords={words}
            />
          ))}
        </div>
      ) : (
        <p class="muted">No executions or scores in {words}: the charts start with the first one recorded.</p>
      )}
    </div>
  );
}
