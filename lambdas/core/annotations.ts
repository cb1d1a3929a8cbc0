/* Which of a pipeline's events mark its charts (GET …/metrics annotations), in a module of no weight. */
import type { EventType } from './events.ts';
import type { Annotation } from './schemas/metrics.ts';

/** The events that mark a chart, and the annotation each becomes. */
export const ANNOTATED: Partial<Record<EventType, Annotation['type']>> = {
  'configuration.activated': 'activation',
  'rollout.started': 'rollout_started',
  'rollout.stepped': 'rollout_stepped',
  'rollout.promoted': 'rollout_ended',
  'rollout.rolled_back': 'rollout_ended',
};
