/**
 * The CLI's one way to call the API: the typed client (cli/client.ts) plus the mapping of its
 * outcomes to the CLI's failures — an error status becomes an ApiFailure with the API's
 * `{error, message}`, an unreachable API a usage-or-network failure (exit 1).
 */
import {
  apiErrorFields,
  type ClientAnswer,
  createPipelineSynthesisClient,
  type PipelineSynthesisClient,
  type SuccessBody,
  succeeded,
} from './client.ts';
import type { Connection } from './config.ts';
import { ApiFailure, CliFailure, EXIT } from './failures.ts';

const USER_AGENT = 'pipeline-synthesis-cli';

export function clientFor(connection: Connection): PipelineSynthesisClient {
  return createPipelineSynthesisClient({
    baseUrl: connection.apiUrl,
    ...(connection.token ? { token: connection.token } : {}),
    headers: { 'user-agent': USER_AGENT },
  });
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

function errorFields(body: unknown): { code: string; message: string; details?: unknown } {
  const { error, message, details } = apiErrorFields(body);
  if (error !== undefined && message !== undefined) return { code: error, message, details };
  return { code: 'HTTP_ERROR', message: typeof body === 'string' && body ? body : 'no error body' };
}

function unreachable(error: unknown, apiUrl: string): CliFailure {
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  const causeField = (key: string) => {
    const value: unknown = typeof cause === 'object' && cause !== null ? Reflect.get(cause, key) : undefined;
    return typeof value === 'string' ? value : undefined;
  };
  const reason =
    causeField('code') ?? causeField('message') ?? (error instanceof Error ? error.message : String(error));
  return new CliFailure(EXIT.usage, `Could not reach the API at ${apiUrl}: ${reason}`);
}

/** Awaits one typed-client call: its body on success, else an ApiFailure or a network failure. */
export async function call<Answer extends ClientAnswer>(
  request: Promise<Answer>,
  apiUrl: string,
): Promise<SuccessBody<Answer>> {
  let answer: Answer;
  try {
    answer = await request;
  } catch (error) {
    throw unreachable(error, apiUrl);
  }
  if (succeeded(answer)) return answer.data;
  const { code, message, details } = errorFields(answer.error);
  const { status, headers } = answer.response;
  throw new ApiFailure(status, code, message, retryAfterSeconds(headers.get('retry-after')), details);
}
