/**
 * Where the CLI sends requests and with which credential: --api-url / PIPELINE_SYNTHESIS_API_URL
 * and --token / PIPELINE_SYNTHESIS_API_TOKEN, or, with neither set, the local stack's
 * seed.json (the first seeded team), which it announces on stderr.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { UsageFailure } from './failures.ts';

export interface Connection {
  apiUrl: string;
  token: string | undefined;
  /** Set when the connection came from the local stack's seed file. */
  fromSeed?: { file: string; teamName: string };
}

export interface ConnectionOptions {
  apiUrl?: string | undefined;
  token?: string | undefined;
  /** With the seed file: the seeded team of this id or name instead of the first. */
  team?: string | undefined;
}

/** `.local/seed.json`, or `$LOCAL_STATE_DIR/seed.json` as `npm start` writes it. */
export function seedFile(env: NodeJS.ProcessEnv, cwd: string): string {
  return path.resolve(cwd, env.LOCAL_STATE_DIR ?? '.local', 'seed.json');
}

function readSeed(
  file: string,
  wanted: string | undefined,
): { apiUrl: string; token: string; teamName: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let seed: unknown;
  try {
    seed = JSON.parse(text);
  } catch {
    throw new UsageFailure(`${file} is not valid JSON; run npm start again or set --api-url and --token.`);
  }
  const { apiUrl, teams } = (seed ?? {}) as { apiUrl?: unknown; teams?: unknown };
  const seeded = (Array.isArray(teams) ? teams : []) as Array<{
    apiToken?: unknown;
    name?: unknown;
    teamId?: unknown;
  }>;
  const first =
    wanted === undefined ? seeded[0] : seeded.find((team) => team.teamId === wanted || team.name === wanted);
  if (wanted !== undefined && first === undefined) {
    throw new UsageFailure(
      `--team ${wanted} is not a team of ${file} (${seeded.map((team) => String(team.name)).join(', ')}).`,
    );
  }
  if (typeof apiUrl !== 'string' || typeof first?.apiToken !== 'string') {
    throw new UsageFailure(`${file} has no apiUrl and team token; run npm start again.`);
  }
  return { apiUrl, token: first.apiToken, teamName: String(first.name ?? 'the first team') };
}

function checkedUrl(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageFailure(`${from} is not a URL: ${value}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageFailure(`${from} must be an http(s) URL: ${value}`);
  }
  return value.replace(/\/+$/, '');
}

/** Options win over the environment; the seed file is used only when neither names a URL or token. */
export function resolveConnection(
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Connection {
  const apiUrl = options.apiUrl ?? (env.PIPELINE_SYNTHESIS_API_URL || undefined);
  const token = options.token ?? (env.PIPELINE_SYNTHESIS_API_TOKEN || undefined);
  if (apiUrl === undefined && token === undefined) {
    const file = seedFile(env, cwd);
    const seed = readSeed(file, options.team);
    if (seed) {
      return {
        apiUrl: checkedUrl(seed.apiUrl, file),
        token: seed.token,
        fromSeed: { file, teamName: seed.teamName },
      };
    }
  }
  if (apiUrl === undefined) {
    throw new UsageFailure(
      'No API to talk to: pass --api-url or set PIPELINE_SYNTHESIS_API_URL (or run npm start for a local stack).',
    );
  }
  return {
    apiUrl: checkedUrl(apiUrl, options.apiUrl ? '--api-url' : 'PIPELINE_SYNTHESIS_API_URL'),
    token,
  };
}
