/*
 * The tokens of the prompt claude-v1 would send for a run: loaded by the start function only when a
 * run asks for claude-v1, so its cold start does not parse the prompt builder (an on-demand part).
 */
import type { SynthesisRun } from '../../core/schemas/runs.ts';
import { readSynthesisContext, type SynthesisContextDeps } from '../../core/use-cases/synthesis-context.ts';
import { buildSynthesisPrompt } from './prompt.ts';

export async function promptTokens(
  context: SynthesisContextDeps,
  run: Pick<SynthesisRun, 'pipelineId' | 'baseConfigurationId' | 'parentRunId' | 'rootRunId'>,
): Promise<number> {
  return buildSynthesisPrompt(await readSynthesisContext(context, run)).estimatedTokens;
}
