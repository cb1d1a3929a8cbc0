/**
 * One metric over time as plain SVG: a line for the whole pipeline and one per configuration, the
 * changes (activations, rollouts) as numbered vertical lines, a readout of the figures at the point
 * hovered, tapped or reached with the arrow keys, and the same figures as a table (in <details>).
 */
import { useState } from 'preact/hooks';
import {
  annotationX,
  BOX,
  bucketTime,
  type ChartMetric,
  chartSummary,
  figureWords,
  type Line,
  labelGroups,
  latestIndex,
  nearestIndex,
  niceCeiling,
  pointsText,
  runsOf,
  xOf,
  yOf,
} from './series.ts';

/** A change drawn on every chart, numbered in time order. */
export interface Marker {
  number: number;
  at: string;
  words: string;
}

export interface ChartProps {
  id: string;
  metric: ChartMetric;
  lines: Line[];
  times: string[];
  step: 'minute' | 'hour' | 'day';
  markers: Marker[];
  rangeWords: string;
}

/** Dashes beside colours, so lines differ without colour too (the whole is solid and darker). */
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2'];
/** Beside configurations' lines, the whole is a wide pale band under them (it would hide one it equals). */
export const lineStyle = (index: number, count: number) => ({
  class:
    index === 0
      ? `series-line series-whole${count > 1 ? ' series-band' : ''}`
      : `series-line series-${((index - 1) % 5) + 1}`,
  'stroke-dasharray': index === 0 ? undefined : DASHES[(index - 1) % DASHES.length] || undefined,
});

const valuesOf = (metric: ChartMetric, line: Line) =>
  line.buckets.map((bucket) => (bucket ? metric.value(bucket) : null));

/** The markers inside the chart with their x, and their numbers' labels (close ones share one). */
function markerLabels(markers: Marker[], times: string[], step: ChartProps['step']) {
  const placed = markers.flatMap((marker) => {
    const x = annotationX(marker.at, times, step);
    return x === null ? [] : [{ ...marker, x }];
  });
  return { placed, labels: labelGroups(placed) };
}

export function LineChart(props: ChartProps) {
  const { metric, lines, times, step } = props;
  const [active, setActive] = useState<number | null>(null);
  const values = lines.map((line) => valuesOf(metric, line));
  const top = niceCeiling(Math.max(0, ...values.flat().filter((value): value is number => value !== null)));
  const count = times.length;
  const pick = (event: PointerEvent) => {
    const box = (event.currentTarget as SVGElement).getBoundingClientRect();
    if (box.width > 0) setActive(nearestIndex(((event.clientX - box.left) / box.width) * BOX.width, count));
  };
  const onKey = (event: KeyboardEvent) => {
    // Page Up / Page Down: a day of hours, a week of days, an hour of minutes.
    const page = { minute: 60, hour: 24, day: 7 }[step];
    const moves: Record<string, number> = {
      ArrowLeft: (active ?? count) - 1,
      ArrowRight: (active ?? -1) + 1,
      PageUp: (active ?? count) - page,
      PageDown: (active ?? -1) + page,
      Home: 0,
      End: count - 1,
    };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    setActive(Math.min(count - 1, Math.max(0, next)));
  };
  const unitWord = step;
  return (
    <figure class="series-chart" aria-labelledby={`${props.id}-title`}>
      <figcaption>
        <h3 id={`${props.id}-title`}>{metric.title}</h3>
      </figcaption>
      <Legend lines={lines} />
      <p id={`${props.id}-summary`} class="visually-hidden">
        {chartSummary(metric, lines, props.rangeWords)}
      </p>
      <div
        class="series-chart-plot"
        role="slider"
        tabIndex={0}
        aria-label={`${metric.title}, ${unitWord} by ${unitWord} (arrow keys)`}
        aria-valuemin={0}
        aria-valuemax={Math.max(0, count - 1)}
        aria-valuenow={active ?? latestIndex(metric, lines)}
        aria-valuetext={pointWords(metric, lines, times, step, active ?? latestIndex(metric, lines))}
        aria-describedby={`${props.id}-summary`}
        onKeyDown={onKey}
        onFocus={() => setActive((current) => current ?? latestIndex(metric, lines))}
        onBlur={() => setActive(null)}
      >
        <Plot
          {...props}
          values={values}
          top={top}
          active={active}
          onPick={pick}
          onLeave={() => setActive(null)}
        />
      </div>
      <Readout
        id={`${props.id}-readout`}
        metric={metric}
        lines={lines}
        times={times}
        step={step}
        active={active}
      />
      <ChartTable {...props} />
    </figure>
  );
}

/** The drawing: grid, markers, lines (broken at gaps), the cursor, the first and last times. */
function Plot(
  props: ChartProps & {
    values: Array<Array<number | null>>;
    top: number;
    active: number | null;
    onPick: (event: PointerEvent) => void;
    onLeave: () => void;
  },
) {
  const { metric, lines, times, step, values, top, active, onPick, onLeave } = props;
  const count = times.length;
  const markers = markerLabels(props.markers, times, step);
  const unitWord = step;
  return (
    <svg
      viewBox={`0 0 ${BOX.width} ${BOX.height}`}
      aria-hidden="true"
      onPointerMove={onPick}
      onPointerDown={onPick}
      onPointerLeave={onLeave}
    >
      <rect
        x={BOX.left}
        y={BOX.top}
        width={BOX.right - BOX.left}
        height={BOX.bottom - BOX.top}
        class="plot"
      />
      {[0.5, 1].map((share) => (
        <g key={share}>
          <line
            x1={BOX.left}
            x2={BOX.right}
            y1={yOf(top * share, top)}
            y2={yOf(top * share, top)}
            class="grid"
          />
          <text x={BOX.left + 3} y={yOf(top * share, top) + 11} font-size="11">
            {metric.format(top * share)}
          </text>
        </g>
      ))}
      {markers.placed.map((marker) => (
        <g key={marker.number} class="marker">
          <title>{`${marker.number}. ${marker.words}`}</title>
          <line x1={marker.x} x2={marker.x} y1={BOX.top - 8} y2={BOX.bottom} />
        </g>
      ))}
      {markers.labels.map((label) => (
        <text
          key={label.text}
          x={label.x}
          y={BOX.top - 10}
          font-size="11"
          text-anchor="middle"
          class="marker-label"
        >
          {label.text}
        </text>
      ))}
      {lines.map((line, index) =>
        runsOf(values[index] ?? [], top).map((run) =>
          run.length === 1 ? (
            <circle
              key={`${line.key}-${run[0]?.[0]}`}
              cx={run[0]?.[0]}
              cy={run[0]?.[1]}
              r="3"
              {...lineStyle(index, lines.length)}
            />
          ) : (
            <polyline
              key={`${line.key}-${run[0]?.[0]}`}
              points={pointsText(run)}
              {...lineStyle(index, lines.length)}
            />
          ),
        ),
      )}
      {active === null ? null : <Cursor index={active} count={count} values={values} top={top} />}
      <text x={BOX.left} y={BOX.bottom + 14} font-size="11">
        {times[0] ? bucketTime(times[0], step) : ''}
      </text>
      <text x={BOX.right} y={BOX.bottom + 14} font-size="11" text-anchor="end">
        {times.at(-1) ? bucketTime(times.at(-1) ?? '', step) : ''}
      </text>
      <text x={BOX.left} y={BOX.bottom + 28} font-size="11" class="muted-text">
        {`from 0 · a point per ${unitWord} (UTC)`}
      </text>
    </svg>
  );
}

/** A point's figures in one sentence: what a screen reader says as the slider moves. */
function pointWords(
  metric: ChartMetric,
  lines: Line[],
  times: string[],
  step: ChartProps['step'],
  index: number,
) {
  const at = times[index];
  if (at === undefined) return 'no points';
  const figures = lines.map((line) => `${line.name}: ${figureWords(metric, line.buckets[index])}`);
  return `${bucketTime(at, step)}. ${figures.join('; ')}`;
}

function Cursor({
  index,
  count,
  values,
  top,
}: {
  index: number;
  count: number;
  values: Array<Array<number | null>>;
  top: number;
}) {
  const x = xOf(index, count);
  return (
    <g class="cursor">
      <line x1={x} x2={x} y1={BOX.top} y2={BOX.bottom} />
      {values.map((line, lineIndex) => {
        const value = line[index];
        return value === null || value === undefined ? null : (
          <circle
            key={lineIndex}
            cx={x}
            cy={yOf(value, top)}
            r="3.5"
            {...lineStyle(lineIndex, values.length)}
          />
        );
      })}
    </g>
  );
}

/** The line's swatch and name; the swatch draws the line's colour and dashes. */
function Legend({ lines }: { lines: Line[] }) {
  return (
    <ul class="series-legend" aria-label="Lines">
      {lines.map((line, index) => (
        <li key={line.key}>
          <svg viewBox="0 0 24 8" width="24" height="8" aria-hidden="true">
            <line x1="0" x2="24" y1="4" y2="4" {...lineStyle(index, lines.length)} />
          </svg>
          {line.name}
        </li>
      ))}
    </ul>
  );
}

/**
 * The figures at the point reached, or at the latest point with a figure until one is: the same
 * lines either way, so the page does not shift under the pointer as it leaves the chart.
 */
function Readout(props: {
  id: string;
  metric: ChartMetric;
  lines: Line[];
  times: string[];
  step: ChartProps['step'];
  active: number | null;
}) {
  const { metric, lines, active } = props;
  const index = active ?? latestIndex(metric, lines);
  const at = props.times[index];
  return (
    <div id={props.id} class="series-readout small">
      <p>
        <strong>
          {at === undefined
            ? 'No points'
            : `${active === null ? 'Latest: ' : ''}${bucketTime(at, props.step)}`}
        </strong>
      </p>
      <ul>
        {lines.map((line) => (
          <li key={line.key}>
            {line.name}: {figureWords(metric, line.buckets[index])}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Every figure of the chart as a table; buckets where no line has one are left out, as the caption says. */
function ChartTable({ id, metric, lines, times, step, markers }: ChartProps) {
  const rows = times.flatMap((at, index) => {
    const within = markers.filter((marker) => bucketIndex(marker.at, times) === index);
    const figures = lines.map((line) => {
      const bucket = line.buckets[index];
      return bucket && metric.value(bucket) !== null ? figureWords(metric, bucket) : null;
    });
    return figures.some((figure) => figure !== null) || within.length > 0 ? [{ at, figures, within }] : [];
  });
  const unitWord = step === 'day' ? 'days' : `${step}s`;
  return (
    <details class="series-table">
      <summary>Table of {metric.title.toLowerCase()}</summary>
      {rows.length === 0 ? (
        <p class="muted small">No figures in this range.</p>
      ) : (
        <>
          <p id={`${id}-caption`} class="series-table-note">
            {metric.title} by {step} (UTC buckets); {unitWord} without figures are left out.
          </p>
          <div class="table-scroll">
            <table class="list cards-on-phone" aria-labelledby={`${id}-caption`}>
              <thead>
                <tr>
                  <th scope="col">{step === 'day' ? 'Day' : 'Hour'}</th>
                  {lines.map((line) => (
                    <th key={line.key} scope="col">
                      {line.name}
                    </th>
                  ))}
                  {markers.length > 0 ? <th scope="col">Changes</th> : null}
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.at}>
                    <th scope="row">
                      <time dateTime={row.at}>{bucketTime(row.at, step)}</time>
                    </th>
                    {row.figures.map((figure, index) => (
                      <td key={lines[index]?.key} data-label={lines[index]?.name}>
                        {figure ?? '—'}
                      </td>
                    ))}
                    {markers.length > 0 ? (
                      <td data-label="Changes">
                        {row.within.map((marker) => `${marker.number}. ${marker.words}`).join('; ') || '—'}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </details>
  );
}

/** The bucket a moment falls in: the last whose start is at or before it. */
function bucketIndex(at: string, times: readonly string[]): number {
  const time = Date.parse(at);
  return times.findLastIndex((start) => Date.parse(start) <= time);
}
