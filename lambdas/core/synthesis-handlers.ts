/**
 * The synthesis handlers a run may name. The HTTP side only needs the names (it must not load the
 * handlers themselves, which would bloat its bundle); the worker's registry maps names to engines.
 */
export const SYNTHESIS_HANDLER_NAMES = ['heuristic-v1', 'claude-v1'] as const;
export type SynthesisHandlerName = (typeof SYNTHESIS_HANDLER_NAMES)[number];
/** The handler that needs nothing: used whenever no Anthropic API key is configured. */
export const DEFAULT_SYNTHESIS_HANDLER: SynthesisHandlerName = 'heuristic-v1';

export function isSynthesisHandlerName(name: string): name is SynthesisHandlerName {
  return (SYNTHESIS_HANDLER_NAMES as readonly string[]).includes(name);
}

/** Where an Anthropic API key may be configured: locally the key itself, on AWS its secret's ARN. */
export interface AnthropicKeySettings {
  ANTHROPIC_API_KEY?: string | undefined;
  ANTHROPIC_SECRET_ARN?: string | undefined;
}

/** The default handler: claude-v1 when an Anthropic API key is configured, heuristic-v1 otherwise. */
export function defaultSynthesisHandler(settings: AnthropicKeySettings): SynthesisHandlerName {
  const configured = [settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_SECRET_ARN].some(
    (value) => value !== undefined && value.trim() !== '',
  );
  return configured ? 'claude-v1' : DEFAULT_SYNTHESIS_HANDLER;
}
