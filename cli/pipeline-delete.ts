/**
 * `pipelines delete <pipelineId>`: deletes a pipeline and everything of it, once the person has
 * typed its name on a terminal (or passed `--yes` from a script), and prints the receipt.
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { call } from './api.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { UsageFailure } from './failures.ts';
import { fields } from './render.ts';

export function addPipelineDeleteCommand(pipelines: Command, io: Io): void {
  pipelines
    .command('delete')
    .description('delete a pipeline and all its data (admins); asks for its name, --yes in scripts')
    .argument('<pipelineId>')
    .option('--yes', 'do not ask: for scripts')
    .action(async (pipelineId: string, options: { yes?: boolean }, command: Command) => {
      const context = contextOf(io, command);
      if (!options.yes) await confirm(context, pipelineId);
      const receipt = await call(
        context.client.DELETE('/pipelines/{pipelineId}', { params: { path: { pipelineId } } }),
        context.apiUrl,
      );
      context.print(
        receipt,
        () =>
          `Deleting pipeline ${pipelineId}: it answers 404 from now on; its data is removed in the background.\n` +
          fields({
            receipt: receipt.id,
            status: receipt.status,
            requested: receipt.requestedAt,
            'follow it': `GET /deletions/${receipt.id}`,
          }),
      );
    });
}

/** The pipeline's name, typed back: the one deletion a person cannot undo. */
async function confirm(context: Context, pipelineId: string): Promise<void> {
  if (context.io.stdin.isTTY !== true) {
    throw new UsageFailure(
      'pipelines delete asks for the pipeline name on a terminal; pass --yes to delete from a script.',
    );
  }
  const pipeline = await call(
    context.client.GET('/pipelines/{pipelineId}', { params: { path: { pipelineId } } }),
    context.apiUrl,
  );
  const rollout = await context.client.GET('/pipelines/{pipelineId}/rollout', {
    params: { path: { pipelineId } },
  });
  if (rollout.data?.status === 'active') {
    context.note(
      `A rollout of this pipeline is running (${rollout.data.percent} % on the candidate); it ends with it.`,
    );
  }
  context.io.stderr.write(
    `This deletes pipeline "${pipeline.name}" with its runs, configurations, signals and executions. Type its name to confirm: `,
  );
  const prompt = createInterface({ input: context.io.stdin });
  try {
    const typed = await prompt.question('');
    if (typed.trim() !== pipeline.name)
      throw new UsageFailure('The name did not match; nothing was deleted.');
  } finally {
    prompt.close();
  }
}
