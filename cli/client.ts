/**
 * The typed client of the Pipeline Synthesis API: openapi-fetch over the types generated from
 * GET /openapi.json (cli/api-types.ts). Exported from the package as `pipeline-synthesis-api/client`;
 * the CLI uses it too.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './api-types.ts';

export type { components, operations, paths };

/** The JSON body an operation answers with `status` (by its operationId, e.g. "get-synthesis-run"). */
export type ResponseBody<Operation extends keyof operations, Status extends number = 200> =
  operations[Operation]['responses'] extends Record<Status, { content: { 'application/json': infer Body } }>
    ? Body
    : never;

export type SynthesisRun = ResponseBody<'get-synthesis-run'>;
export type RunStatus = SynthesisRun['status'];
/** A synthesis handler's name as the API document lists them. */
export type SynthesisHandler = NonNullable<
  NonNullable<
    operations['synthesize-pipeline']['requestBody']
  >['content']['application/json']['synthesisHandler']
>;
export type Pipeline = ResponseBody<'get-pipeline'>;
export type RunDiff = ResponseBody<'get-synthesis-run-diff'>;
export type Me = ResponseBody<'get-me'>;
export type ApiErrorBody = components['schemas']['Error'];

export interface PipelineSynthesisClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The API's base URL: the stack's ApiUrl output, or http://127.0.0.1:3000 for `npm start`. */
  baseUrl: string;
  /** An API token (psa_…) or a session access token, sent as `Authorization: Bearer`. */
  token?: string;
}

export type PipelineSynthesisClient = Client<paths>;

/** What every typed-client call resolves to: openapi-fetch's `{data} | {error}`, with the response. */
export interface ClientAnswer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The success body of a typed-client answer (`undefined` for a 204). */
export type SuccessBody<Answer> = Answer extends { data: infer Body; error?: never } ? Body : never;

/**
 * Whether the API answered with a success status; narrows `data` to the operation's success body.
 * openapi-fetch decides by `response.ok` too (an empty error body leaves `error` undefined).
 */
export function succeeded<Answer extends ClientAnswer>(
  answer: Answer,
): answer is Answer & { data: SuccessBody<Answer> } {
  return answer.response.ok;
}

/**
 * The fields of an `{error, message, details}` body, each only when it has its documented type: an
 * error answer may come from something in front of the API (a gateway's HTML, an empty body).
 */
export function apiErrorFields(body: unknown): { error?: string; message?: string; details?: unknown } {
  if (typeof body !== 'object' || body === null) return {};
  const text = (key: string) => {
    const value: unknown = Reflect.get(body, key);
    return typeof value === 'string' ? value : undefined;
  };
  return { error: text('error'), message: text('message'), details: Reflect.get(body, 'details') };
}

/**
 * A client whose every method is typed by the OpenAPI document:
 * `const { data, error, response } = await client.GET('/synthesis-runs/{id}', { params: { path: { id } } })`.
 * `data` is the success body, `error` the `{error, message}` body of a 4xx/5xx.
 */
export function createPipelineSynthesisClient({
  baseUrl,
  token,
  ...options
}: PipelineSynthesisClientOptions): PipelineSynthesisClient {
  const client = createClient<paths>({ ...options, baseUrl: baseUrl.replace(/\/+$/, '') });
  if (token) {
    client.use({
      onRequest({ request }) {
        request.headers.set('authorization', `Bearer ${token}`);
        return request;
      },
    });
  }
  return client;
}
