/** Where the local stack's start spends its time: phases with their start and end, as `npm start` reports them at debug. */
import type { EarlyStarts } from './early.ts';

/** One phase of the start: milliseconds from the start of startLocalStack to its beginning and end. */
export interface StartPhase {
  name: string;
  startMs: number;
  endMs: number;
}

/** Records when `work` begins and ends, relative to `origin`. */
export function phaseTimer(origin: number, phases: StartPhase[]) {
  return <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const startMs = performance.now() - origin;
    const done = () => phases.push({ name, startMs, endMs: performance.now() - origin });
    return work().finally(done);
  };
}

/** The early starts as phases (they may have begun before `origin`: negative starts). */
export function recordEarly(early: EarlyStarts, origin: number, phases: StartPhase[]): void {
  const startMs = early.atMs - origin;
  const record = (name: string) => () => phases.push({ name, startMs, endMs: performance.now() - origin });
  early.dynamodb.then(record('dynamodb'), () => undefined);
  early.passwords.then(record('passwords'), () => undefined);
}

/** The phases as one line: `name duration (start–end)`, in the order they ended. */
export function formatPhases(phases: readonly StartPhase[]): string {
  const ms = (value: number) => value.toFixed(0);
  return phases
    .map(
      (phase) =>
        `${phase.name} ${ms(phase.endMs - phase.startMs)} ms (${ms(phase.startMs)}–${ms(phase.endMs)})`,
    )
    .join(', ');
}
