/**
 * The synthesis handlers a run may name. The HTTP side only needs the names (it must not load the
 * handlers themselves, which would bloat its bundle); the worker's registry maps names to engines.
 */
export const SYNTHESIS_HANDLER_NAMES = ['heuristic-v1'] as const;
export type SynthesisHandlerName = (typeof SYNTHESIS_HANDLER_NAMES)[number];
export const DEFAULT_SYNTHESIS_HANDLER: SynthesisHandlerName = 'heuristic-v1';

export function isSynthesisHandlerName(name: string): name is SynthesisHandlerName {
  return (SYNTHESIS_HANDLER_NAMES as readonly string[]).includes(name);
}
