/**
 * The CLI's commands about events: `webhooks list|add|remove|deliveries` and `audit`. Each is one
 * typed-client call and a rendering.
 */
import type { Command } from 'commander';
import { EVENT_TYPES } from '../lambdas/core/event-types.ts';
import { call } from './api.ts';
import { nextPage, type PageOptions, parseLimit } from './commands.ts';
import { contextOf, type Io } from './context.ts';
import { fields, table } from './render.ts';

const commaList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

export function addEventCommands(program: Command, io: Io): void {
  addWebhookCommands(program, io);
  addAuditCommand(program, io);
}

function addWebhookCommands(program: Command, io: Io): void {
  const webhooks = program
    .command('webhooks')
    .description("the team's webhooks (signed per Standard Webhooks)");
  webhooks
    .command('list')
    .description('the webhooks (never their secrets)')
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const page = await call(context.client.GET('/webhooks'), context.apiUrl);
      // One row a webhook within 100 columns: the event types summarised, long texts shortened.
      context.print(page, () =>
        table(
          page.items.map((webhook) => ({
            id: webhook.id,
            url: shorten(webhook.url, 36),
            events: eventsSummary(webhook.eventTypes, webhook.allEventTypes),
            description: shorten(webhook.description ?? '', 16),
            created: webhook.createdAt.slice(0, 10),
            state: webhook.disabledAt === null ? 'active' : 'disabled',
          })),
          ['id', 'url', 'events', 'description', 'created', 'state'],
        ),
      );
    });
  webhooks
    .command('add')
    .description('subscribe an https URL to events; the signing secret is shown once')
    .argument('<url>')
    .option('--events <types>', 'comma-separated event types (default: all)', commaList)
    .option('--description <text>', 'what the webhook is for')
    .option(
      '--format <format>',
      'standard (signed envelope, default) | slack (a Slack incoming-webhook message)',
    )
    .action(
      async (
        url: string,
        options: { events?: string[]; description?: string; format?: string },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const body = {
          url,
          ...(options.events ? { eventTypes: options.events as never } : {}),
          ...(options.description ? { description: options.description } : {}),
          ...(options.format ? { format: options.format as never } : {}),
        };
        const created = await call(context.client.POST('/webhooks', { body }), context.apiUrl);
        context.print(
          created,
          () =>
            `${fields({ ...created, eventTypes: created.eventTypes.join(',') })}\n\nThe secret is shown only this once: store it with the receiver.`,
        );
      },
    );
  webhooks
    .command('remove')
    .description('delete a webhook; it receives nothing more')
    .argument('<id>')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(io, command);
      await call(context.client.DELETE('/webhooks/{id}', { params: { path: { id } } }), context.apiUrl);
      context.print(undefined, () => `Deleted webhook ${id}.`);
    });
  webhooks
    .command('deliveries')
    .description("a webhook's delivery attempts, newest first (kept 30 days)")
    .argument('<id>')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(async (id: string, options: PageOptions, command: Command) => {
      const context = contextOf(io, command);
      const page = await call(
        context.client.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: options } }),
        context.apiUrl,
      );
      context.print(
        page,
        () =>
          table(page.items, [
            'attemptedAt',
            'eventType',
            'eventId',
            'attempt',
            'status',
            'responseStatus',
            'nextAttemptAt',
          ]) + nextPage(page.nextCursor),
      );
    });
}

function addAuditCommand(program: Command, io: Io): void {
  program
    .command('audit')
    .description("the team's audit log: who changed what, newest first (admins and members)")
    .option('--pipeline <pipelineId>', "only this pipeline's events")
    .option('--type <type>', 'only events of this type, e.g. synthesis_run.approved')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(async (options: PageOptions & { pipeline?: string; type?: string }, command: Command) => {
      const context = contextOf(io, command);
      const query = {
        ...(options.pipeline ? { pipelineId: options.pipeline } : {}),
        ...(options.type ? { type: options.type as never } : {}),
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.cursor ? { cursor: options.cursor } : {}),
      };
      const page = await call(context.client.GET('/audit-events', { params: { query } }), context.apiUrl);
      context.print(
        page,
        () =>
          table(
            page.items.map((event) => ({
              timestamp: event.timestamp,
              type: event.type,
              actor: actorText(event.data.actor),
              pipeline: event.data.pipelineId ? (event.data.pipelineName ?? event.data.pipelineId) : '',
              what: whatText(event.data),
              id: event.id,
            })),
            ['timestamp', 'type', 'actor', 'pipeline', 'what', 'id'],
          ) + nextPage(page.nextCursor),
      );
    });
}

const shorten = (text: string, width: number) =>
  text.length > width ? `${text.slice(0, width - 1)}…` : text;

/**
 * "all" for a webhook created without a list (every type, those a later release adds too), else
 * the types themselves when they fit, else how many ("25 of 25": each listed, none added later).
 */
export function eventsSummary(types: readonly string[], allEventTypes: boolean): string {
  if (allEventTypes) return 'all';
  const listed = types.join(',');
  return listed.length <= 30 ? listed : `${types.length} of ${EVENT_TYPES.length}`;
}

/** Who acted, for people: the user's email, with the API token's name when they used one. */
function actorText(actor: { userId: string; credential: string; tokenId?: string; name?: string | null }) {
  if (actor.credential === 'system') return 'system';
  if (actor.credential === 'api_token') return actor.name ?? `API token ${actor.tokenId ?? actor.userId}`;
  return `${actor.name ?? actor.userId} (session)`;
}

/** The rest an event names, in words: the version, the member and role, the status. */
function whatText(data: {
  configurationVersion?: number;
  memberName?: string;
  role?: string;
  runId?: string;
  status?: string;
}) {
  return [
    data.configurationVersion ? `version ${data.configurationVersion}` : '',
    data.runId ? `run ${data.runId}` : '',
    data.memberName ?? '',
    data.role ? `as ${data.role}` : '',
    data.status ?? '',
  ]
    .filter(Boolean)
    .join(' · ');
}
