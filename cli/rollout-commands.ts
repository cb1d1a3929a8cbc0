/**
 * The CLI's commands about rollouts and what they measure: rollout show|promote|rollback, serve
 * (what a pipeline runs for a routing key) and runs effect.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { fields, who } from './render.ts';

type Rollout = Awaited<ReturnType<typeof getRollout>>;

function getRollout(context: Context, pipelineId: string) {
  return call(
    context.client.GET('/pipelines/{pipelineId}/rollout', { params: { path: { pipelineId } } }),
    context.apiUrl,
  );
}

function renderRollout(named: Rollout): string {
  const rollout = {
    ...named,
    startedBy: who(named.startedByName, named.startedBy),
    endedBy: who(named.endedByName, named.endedBy),
  };
  return fields(rollout, [
    'id',
    'status',
    'percent',
    'baseConfigurationId',
    'candidateConfigurationId',
    'minExecutions',
    'autoPromote',
    'autoRollback',
    'synthesisRunId',
    'startedAt',
    'startedBy',
    'endedAt',
    'endedBy',
    'endReason',
  ]);
}

const percent = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? 'n/a' : `${(rate * 100).toFixed(1)} %`;

/** A difference of two rates, in signed percentage points ("+2.5 pp" is 10 % → 12.5 %). */
const points = (difference: number | undefined) => {
  if (difference === undefined) return 'n/a';
  const value = Math.round(difference * 1000) / 10;
  return `${value > 0 ? '+' : ''}${value.toFixed(1)} percentage points`;
};

type Effect = Awaited<ReturnType<typeof getEffect>>;

function getEffect(context: Context, runId: string) {
  return call(
    context.client.GET('/synthesis-runs/{id}/effect', { params: { path: { id: runId } } }),
    context.apiUrl,
  );
}

/** The effect in lines: the verdict, each arm's failure rate, their difference in percentage points, each slot. */
export function renderEffect(effect: Effect): string {
  const { base, applied } = effect.arms;
  const lines = [
    `verdict: ${effect.verdict.replaceAll('_', ' ')} (${effect.mode.replace('_', ' ')}, at least ${effect.minExecutions} executions per arm)`,
    `base       ${effect.baseConfigurationId}: ${percent(base.failureRate)} failed (${base.failed} of ${base.executions})`,
    `candidate  ${effect.appliedConfigurationId}: ${percent(applied.failureRate)} failed (${applied.failed} of ${applied.executions})`,
  ];
  if (effect.failureRate) {
    const [low, high] = effect.failureRate.ci95;
    lines.push(
      `difference ${points(effect.failureRate.difference)} (95 % interval ${points(low)} to ${points(high)}), p = ${effect.failureRate.pValue.toFixed(4)}`,
    );
  }
  for (const slot of effect.slots) {
    lines.push(
      `slot ${slot.slotId}: ${percent(slot.base.failureRate)} → ${percent(slot.applied.failureRate)} failed`,
    );
  }
  return lines.join('\n');
}

export function addRolloutCommands(program: Command, io: Io): void {
  const rollout = program.command('rollout').description("a pipeline's rollout: show, promote, roll back");
  rollout
    .command('show')
    .description("the pipeline's active rollout, or its latest")
    .argument('<pipelineId>')
    .action(async (pipelineId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const shown = await getRollout(context, pipelineId);
      context.print(shown, () => renderRollout(shown));
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
    .description('the measured effect of an approved run: failure rates of both arms, the z-test, a verdict')
    .argument('<runId>')
    .action(async (runId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const effect = await getEffect(context, runId);
      context.print(effect, () => renderEffect(effect));
    });
}
