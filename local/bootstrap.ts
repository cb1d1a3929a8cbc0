/**
 * Creates a team, its first admin user and an API token, on a deployed stack or the local one:
 *
 *   npm run bootstrap -- --auth-table <AuthTableName output> --team "Acme" --email ada@acme.example [--name Ada]
 *
 * It writes straight to the auth table with the operator's own AWS credentials (the usual
 * AWS_PROFILE / AWS_REGION), which is why it is a command and not an API endpoint: nobody can
 * call it over HTTP. Against the local stack, add `--endpoint <dynamodbEndpoint from .local/seed.json>`.
 * The token is printed once; only its SHA-256 is stored.
 */
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { makeBootstrapTeam } from '../lambdas/auth/bootstrap.ts';
import { createDocumentClient } from '../lambdas/platform/aws.ts';
import { nanoidGenerator, systemClock } from '../lambdas/platform/clock.ts';
import { makeAuthRepository } from '../lambdas/store/auth.ts';

const { values } = parseArgs({
  options: {
    'auth-table': { type: 'string' },
    team: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    endpoint: { type: 'string' },
    region: { type: 'string' },
  },
});

const authTable = values['auth-table'];
if (!authTable || !values.team || !values.email) {
  console.error(
    'usage: npm run bootstrap -- --auth-table <name> --team <team name> --email <email> [--name <user name>] [--endpoint <url>] [--region <region>]',
  );
  process.exit(2);
}

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
  auth: makeAuthRepository(createDocumentClient(client), authTable),
  clock: systemClock,
  ids: nanoidGenerator,
});
const result = await bootstrap({
  teamName: values.team,
  email: values.email,
  userName: values.name ?? values.email.split('@')[0] ?? values.email,
});
console.log(
  JSON.stringify(
    { teamId: result.teamId, userId: result.userId, tokenId: result.tokenId, apiToken: result.apiToken },
    null,
    2,
  ),
);
console.error('Store the apiToken now: it is not shown again.');
