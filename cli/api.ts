/**
 * The CLI's one way to call the API: the typed client (cli/client.ts) plus the mapping of its
 * outcomes to the CLI's failures — an error status becomes an ApiFailure with the API's
 * `{error, message}`, an unreachable API a usage-or-network failure (exit 1).
 */
import { createPipelineSynthesisClient, type PipelineSynthesisClient } from './client.ts';
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
  if (typeof body === 'object' && body !== null) {
    const { error, message, details } = body as { error?: unknown; message?: unknown; details?: unknown };
    if (typeof error === 'string' && typeof message === 'string') return { code: error, message, details };
  }
  return { code: 'HTTP_ERROR', message: typeof body === 'string' && body ? body : 'no error body' };
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits one typed-client call: its body on success, else an ApiFailure or a network failure. */
export async function call<T>(request: Promise<FetchResult<T>>, apiUrl: string): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await request;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new CliFailure(EXIT.usage, `Could not reach the API at ${apiUrl}: ${reason}`);
  }
  const { response } = result;
  if (!response.ok) {
    const { code, message, details } = errorFields(result.error);
    throw new ApiFailure(
      response.status,
      code,
      message,
      retryAfterSeconds(response.headers.get('retry-after')),
      details,
    );
  }
  return result.data as T;
}
