/**
 * The CLI's commands about rollouts and what they measure: rollout show|promote|rollback, serve
 * (what a pipeline runs for a routing key) and runs effect.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import { contextOf, type Io } from './context.ts';
import { getEffect, getRollout, judgedLines, renderEffect, renderRollout } from './rollout-render.ts';

export function addRolloutCommands(program: Command, io: Io): void {
  const rollout = program.command('rollout').description("a pipeline's rollout: show, promote, roll back");
  rollout
    .command('show')
    .description(
      "the pipeline's active rollout, or its latest: its step, guardrails, every guarded metric and what happens next (--json: the rollout as the API answers it)",
    )
    .argument('<pipelineId>')
    .action(async (pipelineId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const shown = await getRollout(context, pipelineId);
      if (context.json) return context.print(shown, () => '');
      const effect = await getEffect(context, shown.synthesisRunId);
      context.print(shown, () => [renderRollout(shown), ...judgedLines(effect)].join('\n'));
    });
  for (const action of ['promote', 'rollback'] as const) {
    rollout
      .command(action)
      .description(
        action === 'promote'
          ? 'end the active rollout: its candidate becomes active for all traffic'
          : 'end the active rollout: the base stays active',
      )
      .argument('<pipelineId>')
      .option('--reason <text>', 'why, for the record')
      .action(async (pipelineId: string, options: { reason?: string }, command: Command) => {
        const context = contextOf(io, command);
        const body = options.reason ? { reason: options.reason } : {};
        const params = { path: { pipelineId } };
        const ended = await call(
          action === 'promote'
            ? context.client.POST('/pipelines/{pipelineId}/rollout/promote', { params, body })
            : context.client.POST('/pipelines/{pipelineId}/rollout/rollback', { params, body }),
          context.apiUrl,
        );
        context.print(ended, () => renderRollout(ended));
      });
  }
  program
    .command('serve')
    .description('the configuration a pipeline runs now for a routing key (the arm of a rollout it gets)')
    .argument('<pipelineId>')
    .option('--routing-key <key>', 'a user or conversation id (1-256 characters); without it, a random draw')
    .action(async (pipelineId: string, options: { routingKey?: string }, command: Command) => {
      const context = contextOf(io, command);
      const served = await call(
        context.client.GET('/pipelines/{pipelineId}/serving-configuration', {
          params: {
            path: { pipelineId },
            query: options.routingKey === undefined ? {} : { routingKey: options.routingKey },
          },
        }),
        context.apiUrl,
      );
      context.print(
        served,
        () =>
          // The wire's `active` arm is the base, as every other place names it.
          `arm: ${served.arm === 'active' ? 'base' : 'candidate'}${served.rolloutId ? ` (rollout ${served.rolloutId})` : ''}\n` +
          `configuration: ${served.configuration.id} (version ${served.configuration.version})`,
      );
    });
  const runs = program.commands.find((command) => command.name() === 'runs') ?? program.command('runs');
  runs
    .command('effect')
    .description(
      'the measured effect of an approved run: every guarded metric with both arms, the difference, its anytime-valid interval and a verdict, and what happens next',
    )
    .argument('<runId>')
    .option(
      '--history',
      'also each judgement of the rollout: the difference and interval per metric over time',
    )
    .action(async (runId: string, options: { history?: boolean }, command: Command) => {
      const context = contextOf(io, command);
      const effect = await getEffect(context, runId, options.history === true);
      context.print(effect, () => renderEffect(effect));
    });
}
