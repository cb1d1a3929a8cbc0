/**
 * The CLI's commands about the team's data: me, pipelines, signals, executions, tokens, openapi.
 * Each is one or a few typed-client calls and a rendering; runs live in run-commands.ts.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import type { operations } from './client.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { ApiFailure } from './failures.ts';
import { addPipelineDeleteCommand } from './pipeline-delete.ts';
import { batches, readJsonObject, readRecords } from './records.ts';
import { fields, table } from './render.ts';

type RequestBody<Operation extends keyof operations> = operations[Operation] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/**
 * A body read from the user's file, sent as it is: the API validates it, and its 400 names what is
 * wrong better than a copy of its rules here would.
 */
const unvalidated = <Operation extends keyof operations>(body: Record<string, unknown>) =>
  body as RequestBody<Operation>;

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

export const parseLimit = (value: string): number => {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new Error('--limit must be an integer from 1 to 100');
  }
  return limit;
};

/** The hint under a list page that has a next one. */
export const nextPage = (cursor: string | null) => (cursor ? `\n(more: --cursor ${cursor})` : '');

/** The data commands: one function a command or command group. */
export function addDataCommands(program: Command, io: Io): void {
  addMeCommand(program, io);
  addPipelineCommands(program, io);
  for (const kind of RECORD_KINDS) addRecordCommand(program, io, kind);
  addTokenCommands(program, io);
  addOpenApiCommand(program, io);
}

function addMeCommand(program: Command, io: Io): void {
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
}

function addPipelineCommands(program: Command, io: Io): void {
  const pipelines = program.command('pipelines').description("the team's pipelines");
  pipelines
    .command('list')
    .description('pipelines, newest first')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page, as the previous one said')
    .action(async (options: PageOptions, command: Command) => {
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
  addPipelineDeleteCommand(pipelines, io);
  pipelines
    .command('create')
    .description('create a pipeline from a JSON file {name, slots}')
    .requiredOption('--file <path>', 'the JSON body ("-" for stdin)')
    .action(async (options: { file: string }, command: Command) => {
      const context = contextOf(io, command);
      const body = unvalidated<'create-pipeline'>(readJsonObject(options.file));
      const pipeline = await call(context.client.POST('/pipelines', { body }), context.apiUrl);
      context.print(pipeline, () => `Created pipeline ${pipeline.id}\n${fields(pipeline)}`);
    });
}

const RECORD_KINDS = ['signals', 'executions'] as const;
type RecordKind = (typeof RECORD_KINDS)[number];

/** One batch of `signals add` or `executions add`: the API's answer, which --json prints. */
function recordBatch(
  context: Context,
  kind: RecordKind,
  pipelineId: string,
  batch: Record<string, unknown>[],
): Promise<unknown> {
  const params = { path: { pipelineId } };
  if (kind === 'signals') {
    const body = unvalidated<'record-signals'>({ signals: batch });
    return call(context.client.POST('/pipelines/{pipelineId}/signals', { params, body }), context.apiUrl);
  }
  const body = unvalidated<'record-executions'>({ executions: batch });
  return call(context.client.POST('/pipelines/{pipelineId}/executions', { params, body }), context.apiUrl);
}

/** `signals add` / `executions add`: the records in batches of 100, each all or nothing. */
async function recordAll(context: Context, kind: RecordKind, pipelineId: string, file: string) {
  const parts = batches(readRecords(file, kind));
  let recorded = 0;
  for (const [index, batch] of parts.entries()) {
    let answer: unknown;
    try {
      answer = await recordBatch(context, kind, pipelineId, batch);
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
}

function addRecordCommand(program: Command, io: Io, kind: RecordKind): void {
  program
    .command(kind)
    .description(`record ${kind}`)
    .command('add')
    .description(`record ${kind} from JSON or NDJSON, in batches of 100, each all or nothing`)
    .argument('<pipelineId>')
    .requiredOption('--file <path>', `a JSON array, {"${kind}": [...]} or NDJSON ("-" for stdin)`)
    .action((pipelineId: string, options: { file: string }, command: Command) =>
      recordAll(contextOf(io, command), kind, pipelineId, options.file),
    );
}

function addTokenCommands(program: Command, io: Io): void {
  const tokens = program.command('tokens').description('your API tokens');
  tokens
    .command('list')
    .description('your API tokens (never their secrets)')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(async (options: PageOptions, command: Command) => {
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
}

function addOpenApiCommand(program: Command, io: Io): void {
  program
    .command('openapi')
    .description("the API's OpenAPI document (JSON)")
    .action(async (_options, command: Command) => {
      const context = contextOf(io, command);
      const document = await call(context.client.GET('/openapi.json'), context.apiUrl);
      context.print(document, () => JSON.stringify(document, null, 2));
    });
}
