/**
 * The pipeline page's "Over time" section: over 24 h, 7 d or 30 d (GET …/metrics by configuration,
 * the whole beside), a chart each of the failure rate, the p95 duration, the tokens per execution
 * and each score kind, with the activations and rollouts of the range numbered on every chart.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, client } from '../api.ts';
import { LineChart, type Marker } from '../charts/line-chart.tsx';
import {
  type Annotation,
  annotationBy,
  chartMetrics,
  linesOf,
  linesWithFigures,
  type MetricsAnswer,
  RANGES,
  type RangeName,
  rangeQuery,
  versionsOf,
  wholeOf,
} from '../charts/series.ts';
import { ErrorNotice, Loading, Time, useLoad } from '../ui.tsx';

/** The most configurations whose versions are read one by one (those no annotation names). */
const MAX_CONFIGURATIONS_READ = 8;

/**
 * The range's answer, by configuration (the whole is its first series). A range reaching past the
 * team's retention is asked again from the oldest time allowed, which the 400 names.
 */
async function getMetrics(pipelineId: string, range: RangeName) {
  const query = { ...rangeQuery(range, Date.now()), groupBy: 'configuration' as const };
  const ask = (from: string) =>
    api(
      client.GET('/pipelines/{pipelineId}/metrics', {
        params: { path: { pipelineId }, query: { ...query, from } },
      }),
    );
  try {
    return await ask(query.from);
  } catch (error) {
    const oldest = error instanceof ApiError ? oldestAllowed(error.details) : undefined;
    if (!oldest) throw error;
    return { ...(await ask(oldest)), clippedBy: 'retention' as const };
  }
}

/** The oldest time a retention refusal names, rounded up to the hour (days are rounded down by the API). */
function oldestAllowed(details: unknown): string | undefined {
  const text =
    typeof details === 'object' && details !== null ? Reflect.get(details, 'oldestAllowed') : undefined;
  const time = typeof text === 'string' ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) return undefined;
  return new Date(Math.ceil(time / 3_600_000) * 3_600_000).toISOString();
}

async function loadMetrics(pipelineId: string, range: RangeName, known: ReadonlyMap<string, number>) {
  const answer = await getMetrics(pipelineId, range);
  const versions = versionsOf(answer.annotations, known);
  const unknown = answer.series
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
  return { answer, versions, clipped: 'clippedBy' in answer, range };
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
        <Charts {...loaded.data} busy={loaded.loading} />
      ) : loaded.error ? null : (
        <Loading what="the charts" />
      )}
    </section>
  );
}

function Charts(props: {
  answer: MetricsAnswer;
  versions: Map<string, number>;
  clipped: boolean;
  range: RangeName;
  busy: boolean;
}) {
  const { answer, versions } = props;
  const words = RANGES[props.range].words;
  const buckets = wholeOf(answer);
  const times = buckets.map((bucket) => bucket.at);
  const annotations = [...answer.annotations].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const markers: Marker[] = annotations.map((annotation, index) => ({
    number: index + 1,
    at: annotation.at,
    words: markerWords(annotation),
  }));
  const lines = linesOf(answer, versions);
  const recorded = buckets.some(
    (bucket) => bucket.executions > 0 || Object.values(bucket.scores).some((score) => score.count > 0),
  );
  return (
    <div aria-busy={props.busy}>
      {props.clipped ? (
        <p class="notice notice-warning">
          The team keeps records for less than {words.replace('the last ', '')}: the charts start at{' '}
          <Time iso={answer.from} />, the oldest its retention allows.
        </p>
      ) : null}
      {markers.length > 0 ? (
        <>
          <h3 id="changes-in-range">Activations and rollouts in {words}</h3>
          <ol class="chart-markers" aria-labelledby="changes-in-range">
            {annotations.map((annotation, index) => (
              <li key={`${annotation.at}-${annotation.type}-${annotation.configurationId}`}>
                <span class="marker-number">{index + 1}</span> <Time iso={annotation.at} />:{' '}
                {annotation.label}, by {annotationBy(annotation)}
              </li>
            ))}
          </ol>
        </>
      ) : null}
      {recorded ? (
        <>
          <p class="muted small">
            Hover or tap a chart, or focus it and use ← →, to read each point; each chart's table has every
            figure.
          </p>
          <div class="series-charts">
            {chartMetrics(answer).map((metric, index) => (
              <LineChart
                key={metric.id}
                id={`chart-${index}`}
                metric={metric}
                lines={linesWithFigures(metric, lines)}
                times={times}
                step={answer.step}
                markers={markers}
                rangeWords={words}
              />
            ))}
          </div>
        </>
      ) : (
        <p class="muted">No executions or scores in {words}: the charts start with the first one recorded.</p>
      )}
    </div>
  );
}
