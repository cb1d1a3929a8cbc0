import type { SynthesisEngine } from '../core/ports.ts';
import type { SynthesisHandlerName } from '../core/synthesis-handlers.ts';
import { heuristicV1 } from './heuristic-v1.ts';

/** The worker's handler registry: every name the API accepts maps to an engine. */
export const SYNTHESIS_ENGINES: Readonly<Record<SynthesisHandlerName, SynthesisEngine>> = {
  'heuristic-v1': heuristicV1,
};
