/**
 * Creates a team, its first admin user and an API token, on a deployed stack or the local one:
 *
 *   npm run bootstrap -- --auth-table <AuthTableName output> --events-table <EventsTableName output> --team "Acme" --email ada@acme.example \
 *     [--name Ada] [--password-stdin] [--region eu-west-1]
 *
 * It writes straight to the auth table with the operator's own AWS credentials (the usual
 * AWS_PROFILE / AWS_REGION), which is why it is a command and not an API endpoint: nobody can
 * call it over HTTP. Against the local stack, add `--endpoint <dynamodbEndpoint from .local/seed.json>`.
 * The token is printed once; only its SHA-256 is stored.
 *
 * `--password-stdin` reads the admin's password from standard input (first line), never from an
 * argument, so it stays out of shell history and the process list. Without it the admin signs in
 * with a magic link or uses the API token.
 */
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { makeBootstrapTeam } from '../lambdas/auth/bootstrap.ts';
import { noUsageKeys } from '../lambdas/auth/usage-keys.ts';
import { ApiError } from '../lambdas/core/errors.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { nanoidGenerator, systemClock } from '../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../lambdas/wiring/repositories.ts';

const { values } = parseArgs({
  options: {
    'auth-table': { type: 'string' },
    'events-table': { type: 'string' },
    team: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    endpoint: { type: 'string' },
    region: { type: 'string' },
  },
});

const authTable = values['auth-table'];
const eventsTable = values['events-table'];
if (!authTable || !eventsTable || !values.team || !values.email) {
  console.error(
    'usage: npm run bootstrap -- --auth-table <name> --events-table <name> --team <team name> --email <email> [--name <user name>] [--password-stdin] [--endpoint <url>] [--region <region>]',
  );
  process.exit(2);
}

async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trimEnd();
}

const password = values['password-stdin'] ? await readPasswordFromStdin() : undefined;

const client = new DynamoDBClient({
  ...(values.endpoint
    ? {
        endpoint: values.endpoint,
        region: values.region ?? 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : values.region
      ? { region: values.region }
      : {}),
});
const bootstrap = makeBootstrapTeam({
  auth: makeAuthRepository(createDocumentClient(client), authTable, eventsTable),
  clock: systemClock,
  ids: nanoidGenerator,
  usageKeys: noUsageKeys,
});
try {
  const result = await bootstrap({
    teamName: values.team,
    email: values.email,
    userName: values.name ?? values.email.split('@')[0] ?? values.email,
    ...(password !== undefined ? { password } : {}),
  });
  console.log(
    JSON.stringify(
      { teamId: result.teamId, userId: result.userId, tokenId: result.tokenId, apiToken: result.apiToken },
      null,
      2,
    ),
  );
  console.error('Store the apiToken now: it is not shown again.');
} catch (error) {
  // A weak password or a taken email is the operator's to fix: say which, without a stack trace.
  if (error instanceof ApiError) {
    // An existing person joins another team by invitation, never by a second bootstrap.
    const hint = /already exists/.test(error.message)
      ? ' To add this person to a team, an admin of it invites them: pipeline-synthesis members invite <email> --role member (or Settings → Members in the app).'
      : '';
    console.error(`bootstrap refused: ${error.message}${hint}`);
    process.exit(1);
  }
  throw error;
}
