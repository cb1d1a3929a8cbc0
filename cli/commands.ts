/**
 * The CLI's commands about the team's data: me, pipelines, signals, executions, tokens, openapi.
 * Each is one or a few typed-client calls and a rendering; runs live in run-commands.ts.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import type { operations } from './client.ts';
import { contextOf, type Io } from './context.ts';
import { ApiFailure } from './failures.ts';
import { batches, readJsonObject, readRecords } from './records.ts';
import { fields, table } from './render.ts';

type Body<Operation extends keyof operations> = operations[Operation] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export const parseLimit = (value: string): number => {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new Error('--limit must be an integer from 1 to 100');
  }
  return limit;
};

const nextPage = (cursor: string | null) => (cursor ? `\n(more: --cursor ${cursor})` : '');

export function addDataCommands(program: Command, io: Io): void {
  program
    .command('me')
    .description('who the credential belongs to: user, teams, how it authenticated')
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const me = await call(context.client.GET('/me'), context.apiUrl);
      context.print(me, () =>
        [
          fields({ user: me.user.email, name: me.user.name, id: me.user.id }),
          fields({
            authenticated: me.authentication.method,
            team: me.authentication.teamId,
            role: me.authentication.role,
          }),
          table(me.teams, ['id', 'name', 'role']),
        ].join('\n\n'),
      );
    });

  const pipelines = program.command('pipelines').description("the team's pipelines");
  pipelines
    .command('list')
    .description('pipelines, newest first')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page, as the previous one said')
    .action(async (options: { limit?: number; cursor?: string }, command: Command) => {
      const context = contextOf(io, command);
      const page = await call(
        context.client.GET('/pipelines', { params: { query: options } }),
        context.apiUrl,
      );
      context.print(
        page,
        () =>
          table(page.items, ['id', 'name', 'activeConfigurationId', 'createdAt']) + nextPage(page.nextCursor),
      );
    });
  pipelines
    .command('show')
    .description('one pipeline')
    .argument('<pipelineId>')
    .action(async (pipelineId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const pipeline = await call(
        context.client.GET('/pipelines/{pipelineId}', { params: { path: { pipelineId } } }),
        context.apiUrl,
      );
      context.print(pipeline, () => fields(pipeline));
    });
  pipelines
    .command('create')
    .description('create a pipeline from a JSON file {name, slots}')
    .requiredOption('--file <path>', 'the JSON body ("-" for stdin)')
    .action(async (options: { file: string }, command: Command) => {
      const context = contextOf(io, command);
      // The API validates the body; a bad file is its 400 with the details.
      const body = readJsonObject(options.file) as Body<'create-pipeline'>;
      const pipeline = await call(context.client.POST('/pipelines', { body }), context.apiUrl);
      context.print(pipeline, () => `Created pipeline ${pipeline.id}\n${fields(pipeline)}`);
    });

  for (const kind of ['signals', 'executions'] as const) {
    program
      .command(kind)
      .description(`record ${kind}`)
      .command('add')
      .description(`record ${kind} from JSON or NDJSON, in batches of 100, each all or nothing`)
      .argument('<pipelineId>')
      .requiredOption('--file <path>', `a JSON array, {"${kind}": [...]} or NDJSON ("-" for stdin)`)
      .action(async (pipelineId: string, options: { file: string }, command: Command) => {
        const context = contextOf(io, command);
        const records = readRecords(options.file, kind);
        const parts = batches(records);
        let recorded = 0;
        for (const [index, batch] of parts.entries()) {
          const params = { path: { pipelineId } };
          let answer: unknown;
          try {
            answer =
              kind === 'signals'
                ? await call(
                    context.client.POST('/pipelines/{pipelineId}/signals', {
                      params,
                      body: { signals: batch } as Body<'record-signals'>,
                    }),
                    context.apiUrl,
                  )
                : await call(
                    context.client.POST('/pipelines/{pipelineId}/executions', {
                      params,
                      body: { executions: batch } as Body<'record-executions'>,
                    }),
                    context.apiUrl,
                  );
          } catch (error) {
            if (error instanceof ApiFailure) {
              const first = index * 100 + 1;
              context.note(
                `Batch ${index + 1} of ${parts.length} (records ${first}-${first + batch.length - 1}) was refused; nothing of it was stored. ${recorded} ${kind} recorded before it.`,
              );
            }
            throw error;
          }
          recorded += batch.length;
          if (context.json) context.print(answer, () => '');
        }
        if (!context.json) {
          context.print(
            undefined,
            () => `Recorded ${recorded} ${kind} in ${parts.length} batch${parts.length === 1 ? '' : 'es'}.`,
          );
        }
      });
  }

  const tokens = program.command('tokens').description('your API tokens');
  tokens
    .command('list')
    .description('your API tokens (never their secrets)')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(async (options: { limit?: number; cursor?: string }, command: Command) => {
      const context = contextOf(io, command);
      const page = await call(
        context.client.GET('/api-tokens', { params: { query: options } }),
        context.apiUrl,
      );
      context.print(
        page,
        () =>
          table(page.items, ['id', 'name', 'hint', 'teamId', 'lastUsedAt', 'expiresAt', 'revokedAt']) +
          nextPage(page.nextCursor),
      );
    });
  tokens
    .command('create')
    .description('create an API token (needs a session access token as --token); the secret is shown once')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--team <teamId>', "the team (default: the credential's team)")
    .option('--expires-at <timestamp>', 'ISO 8601 UTC expiry')
    .action(async (options: { name: string; team?: string; expiresAt?: string }, command: Command) => {
      const context = contextOf(io, command);
      const teamId =
        options.team ?? (await call(context.client.GET('/me'), context.apiUrl)).authentication.teamId;
      const body = {
        name: options.name,
        teamId,
        ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
      };
      const created = await call(context.client.POST('/api-tokens', { body }), context.apiUrl);
      context.print(created, () => `${fields(created)}\n\nThe token is shown only this once: store it now.`);
    });
  tokens
    .command('revoke')
    .description('revoke an API token')
    .argument('<id>')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(io, command);
      await call(context.client.DELETE('/api-tokens/{id}', { params: { path: { id } } }), context.apiUrl);
      context.print(undefined, () => `Revoked token ${id}.`);
    });

  program
    .command('openapi')
    .description("the API's OpenAPI document (JSON)")
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const document = await call(context.client.GET('/openapi.json'), context.apiUrl);
      context.print(document, () => JSON.stringify(document, null, 2));
    });
}
