/**
 * A guarded metric's difference (candidate − base) at each judgement, its interval as a band, the
 * zero line, the dashed threshold line on the worse side and the 95 % worst case a promotion waits
 * on (under the threshold line: within it), against the candidate's executions; an
 * image to assistive technology, named by a sentence that says what it shows and where it ends.
 */
import { formatCount } from '../format.ts';
import { chartSummary, type Metric, type Point, signedDelta, thresholdLine } from '../metric-format.ts';

export type { Point };

/** The drawing's own units (it scales with its tile): the plot inside, labels around it. */
const BOX = { width: 280, height: 150, left: 6, right: 274, top: 16, bottom: 118 };

/** The difference's range to draw: 0, the threshold and the intervals, the early wide ones cut off. */
function range(points: Point[], threshold: number): [number, number] {
  const last = points.at(-1);
  const cap = Math.max(
    Math.abs(threshold) * 3,
    last ? Math.max(Math.abs(last.low), Math.abs(last.high)) * 1.5 : 0,
  );
  let low = Math.min(0, threshold);
  let high = Math.max(0, threshold);
  for (const point of points) {
    low = Math.min(low, Math.max(point.low, -cap));
    high = Math.max(high, Math.min(point.high, cap));
  }
  const pad = (high - low) * 0.08 || 1;
  return [low - pad, high + pad];
}

export function DifferenceChart({ metric, name, points }: { metric: Metric; name: string; points: Point[] }) {
  const summary = chartSummary(metric, name, points);
  if (points.length === 0)
    return (
      <p class="muted small chart-empty" role="img" aria-label={summary}>
        The chart starts once each arm has enough observations for an interval.
      </p>
    );
  const threshold = thresholdLine(metric);
  const [low, high] = range(points, threshold);
  const first = points[0]?.n ?? 0;
  const lastN = points.at(-1)?.n ?? first;
  const x = (n: number) =>
    lastN === first
      ? (BOX.left + BOX.right) / 2
      : BOX.left + ((n - first) / (lastN - first)) * (BOX.right - BOX.left);
  const y = (value: number) => {
    const clamped = Math.min(high, Math.max(low, value));
    return BOX.bottom - ((clamped - low) / (high - low)) * (BOX.bottom - BOX.top);
  };
  const xy = (n: number, value: number) => `${x(n).toFixed(1)},${y(value).toFixed(1)}`;
  const band = [
    ...points.map((p) => xy(p.n, p.high)),
    ...[...points].reverse().map((p) => xy(p.n, p.low)),
  ].join(' ');
  const bounded = points.filter((p) => p.bound !== undefined);
  const steps = points.filter((p, i) => i > 0 && p.step !== points[i - 1]?.step);
  const last = points.at(-1) as Point;
  // The threshold's label sits on the side of its line away from 0, inside the plot.
  const thresholdLabelY = y(threshold) + (threshold >= 0 ? -4 : 12);
  return (
    <svg class="difference-chart" viewBox={`0 0 ${BOX.width} ${BOX.height}`} role="img" aria-label={summary}>
      <rect
        x={BOX.left}
        y={BOX.top}
        width={BOX.right - BOX.left}
        height={BOX.bottom - BOX.top}
        class="plot"
      />
      {steps.map((p) => (
        <g key={`step-${p.n}`}>
          <line x1={x(p.n)} x2={x(p.n)} y1={BOX.top} y2={BOX.bottom} class="step-line" />
          <text x={x(p.n) + 3} y={BOX.top + 10} font-size="10">{`step ${p.step + 1}`}</text>
        </g>
      ))}
      {points.length > 1 ? (
        <polygon points={band} class="interval-band" />
      ) : (
        <line x1={x(last.n)} x2={x(last.n)} y1={y(last.low)} y2={y(last.high)} class="interval-bar" />
      )}
      <line x1={BOX.left} x2={BOX.right} y1={y(0)} y2={y(0)} class="zero-line" />
      <line x1={BOX.left} x2={BOX.right} y1={y(threshold)} y2={y(threshold)} class="threshold-line" />
      <text x={BOX.right - 3} y={thresholdLabelY} font-size="11" text-anchor="end" class="threshold-label">
        {`threshold ${signedDelta(metric, threshold)}`}
      </text>
      <text x={BOX.left + 3} y={y(0) + (threshold >= 0 ? 12 : -4)} font-size="11">
        0
      </text>
      {bounded.length > 1 ? (
        <polyline points={bounded.map((p) => xy(p.n, p.bound ?? 0)).join(' ')} class="bound-line" />
      ) : null}
      {points.length > 1 ? (
        <polyline points={points.map((p) => xy(p.n, p.difference)).join(' ')} class="difference-line" />
      ) : null}
      <circle cx={x(last.n)} cy={y(last.difference)} r="3.5" class="difference-dot" />
      <text x={BOX.left} y={BOX.bottom + 14} font-size="11">
        {formatCount(first)}
      </text>
      <text x={BOX.right} y={BOX.bottom + 14} font-size="11" text-anchor="end">
        {formatCount(lastN)}
      </text>
      <text x={(BOX.left + BOX.right) / 2} y={BOX.bottom + 28} font-size="11" text-anchor="middle">
        candidate executions
      </text>
    </svg>
  );
}
