/**
 * A local fake of Amazon Bedrock's InvokeModel for Anthropic's models: a real HTTP server on
 * 127.0.0.1 that the real Bedrock SDK reaches through `baseURL` (BEDROCK_BASE_URL). Each
 * `POST /model/{modelId}/invoke` is checked as Bedrock checks it — a SigV4 signature for the
 * `bedrock` service in the fake's region, recomputed from the known secret; `anthropic_version`
 * in the body; no `model` in the body; a model id it serves — then takes the next scripted reply
 * (the Messages fake's replies, or Bedrock's errors below) and is recorded for assertions.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { autoReply, type FakeReply, type ReceivedRequest } from './anthropic-fake.ts';
import { makePromptCache } from './prompt-cache-fake.ts';

/** The only anthropic_version Bedrock's Claude models accept. */
export const BEDROCK_VERSION = 'bedrock-2023-05-31';
export const FAKE_BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-6-v1:0';

/** Bedrock's error answer: the status, its type in x-amzn-ErrorType, a `{message}` body. */
export const bedrockError = (status: number, type: string, message: string): FakeReply => ({
  kind: 'error',
  status,
  errorType: type,
  message,
});
export const throttled = () =>
  bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
export const accessDenied = () =>
  bedrockError(
    403,
    'AccessDeniedException',
    "You don't have access to the model with the specified model ID.",
  );
export const modelNotReady = () =>
  bedrockError(429, 'ModelNotReadyException', 'The model is not ready to serve inference requests.');
export const serviceUnavailable = () =>
  bedrockError(503, 'ServiceUnavailableException', 'Service unavailable.');

export interface BedrockFake {
  /** The base URL to give the SDK (BEDROCK_BASE_URL). */
  url: string;
  region: string;
  /** Requests that passed the signature check, with the model id from the path. */
  requests: (ReceivedRequest & { modelId: string })[];
  /** Requests refused before any reply was taken (bad signature, version, body or model). */
  refused: { status: number; type: string; message: string }[];
  script(...replies: FakeReply[]): void;
  reset(): void;
  close(): Promise<void>;
}

export interface BedrockFakeOptions {
  port?: number;
  region?: string;
  /** The secret of each access key id it accepts. @default the local stack's ("local"). */
  credentials?: Record<string, string>;
  /** Model ids it serves; any other is a ValidationException, as Bedrock answers. */
  models?: readonly string[];
  autoReply?: boolean;
  /** Milliseconds before each answer: the model's time, for the bench and the slow scenario. */
  latencyMs?: number;
  /** Report usage from the request's size and a prompt cache (prompt-cache-fake.ts). */
  promptCache?: boolean;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

function sendError(response: ServerResponse, status: number, type: string, message: string) {
  response.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': 'fake-request-id',
  });
  response.end(JSON.stringify({ message }));
}

type Check = { ok: true } | { ok: false; status: number; type: string; message: string };
const refuse = (status: number, type: string, message: string): Check => ({
  ok: false,
  status,
  type,
  message,
});

/** Recomputes the request's SigV4 signature with the key id's secret, as Bedrock does. */
async function checkSignature(
  request: {
    method: string;
    path: string;
    headers: Record<string, string | string[] | undefined>;
    raw: string;
  },
  region: string,
  credentials: Record<string, string>,
): Promise<Check> {
  const header = String(request.headers.authorization ?? '');
  const match = AUTHORIZATION.exec(header);
  if (!match)
    return refuse(
      403,
      'IncompleteSignatureException',
      `Authorization header is not SigV4 for bedrock: ${header.slice(0, 40)}`,
    );
  const [, keyId = '', , signedRegion, signedList = '', signature] = match;
  if (signedRegion !== region)
    return refuse(
      403,
      'InvalidSignatureException',
      `Credential should be scoped to a valid region, not '${signedRegion}'.`,
    );
  const secret = credentials[keyId];
  if (secret === undefined)
    return refuse(
      403,
      'UnrecognizedClientException',
      'The security token included in the request is invalid.',
    );
  const signed = signedList.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date'))
    return refuse(403, 'IncompleteSignatureException', 'SignedHeaders must include host and x-amz-date.');
  const headers = Object.fromEntries(signed.map((name) => [name, String(request.headers[name] ?? '')]));
  const date = headers['x-amz-date'] ?? '';
  const signingDate = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const [path = '', query = ''] = request.path.split('?');
  const signer = new SignatureV4({
    service: 'bedrock',
    region,
    credentials: {
      accessKeyId: keyId,
      secretAccessKey: secret,
      sessionToken: headers['x-amz-security-token'],
    },
    sha256: Sha256,
  });
  const again = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: 'http:',
      hostname: (headers.host ?? '').split(':')[0] ?? '',
      path,
      query: Object.fromEntries(new URLSearchParams(query)),
      headers,
      body: request.raw,
    }),
    { signingDate },
  );
  const expected = String(again.headers.authorization ?? '').split('Signature=')[1];
  return expected === signature
    ? { ok: true }
    : refuse(
        403,
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided.',
      );
}

/** Bedrock's own checks of an InvokeModel body for an Anthropic model. */
function checkBody(body: unknown, modelId: string, models: readonly string[]): Check {
  if (!models.includes(modelId))
    return refuse(400, 'ValidationException', 'The provided model identifier is invalid.');
  if (typeof body !== 'object' || body === null)
    return refuse(400, 'ValidationException', 'Malformed input request.');
  const fields = body as Record<string, unknown>;
  if (fields.anthropic_version !== BEDROCK_VERSION)
    return refuse(
      400,
      'ValidationException',
      `invalid anthropic_version: ${String(fields.anthropic_version)}`,
    );
  if ('model' in fields)
    return refuse(
      400,
      'ValidationException',
      'Malformed input request: extraneous key [model] is not permitted.',
    );
  return { ok: true };
}

/** Starts the fake on 127.0.0.1. */
export async function startBedrockFake(options: BedrockFakeOptions = {}): Promise<BedrockFake> {
  const region = options.region ?? 'us-east-1';
  const credentials = options.credentials ?? { local: 'local' };
  const models = options.models ?? [FAKE_BEDROCK_MODEL];
  const cache = makePromptCache();
  const queue: FakeReply[] = [];
  const requests: BedrockFake['requests'] = [];
  const refused: BedrockFake['refused'] = [];

  const answer = async (
    method: string,
    path: string,
    headers: Record<string, string | string[] | undefined>,
    raw: string,
    response: ServerResponse,
  ) => {
    const route = /^\/model\/([^/]+)\/invoke$/.exec(path.split('?')[0] ?? '');
    if (method !== 'POST' || !route) {
      sendError(response, 404, 'UnknownOperationException', `No operation at ${method} ${path}`);
      return;
    }
    const modelId = decodeURIComponent(route[1] ?? '');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const check = await checkSignature({ method, path, headers, raw }, region, credentials);
    const verdict = check.ok ? checkBody(body, modelId, models) : check;
    if (!verdict.ok) {
      refused.push({ status: verdict.status, type: verdict.type, message: verdict.message });
      sendError(response, verdict.status, verdict.type, verdict.message);
      return;
    }
    requests.push({ method, path, headers, raw, body, modelId, receivedAt: Date.now() });
    const reply = queue.shift() ?? (options.autoReply ? autoReply(body) : undefined);
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    if (reply === undefined) {
      sendError(response, 500, 'InternalServerException', 'The fake has no scripted reply.');
      return;
    }
    if (reply.kind === 'hang') return;
    if (reply.kind === 'error') {
      sendError(response, reply.status, reply.errorType, reply.message);
      return;
    }
    const replied: Record<string, unknown> = { ...reply.body, model: modelId };
    if (options.promptCache) {
      const output = (reply.body.usage as { output_tokens?: number } | undefined)?.output_tokens ?? 0;
      replied.usage = cache.usage(body, output);
    }
    response.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-request-id' });
    response.end(JSON.stringify(replied));
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void answer(
        request.method ?? '',
        request.url ?? '',
        request.headers,
        Buffer.concat(chunks).toString('utf8'),
        response,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    region,
    requests,
    refused,
    script: (...replies) => {
      queue.push(...replies);
    },
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      refused.length = 0;
      cache.clear();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// `npx tsx test/support/bedrock-fake.ts [port]` serves the fake with automatic replies, so the
// local stack can run claude-v1 on "Bedrock" offline (MODEL_PROVIDER=bedrock,
// BEDROCK_BASE_URL=http://127.0.0.1:<port>; the local stack's credentials are accepted).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fake = await startBedrockFake({
    port: Number(process.argv[2] ?? process.env.PORT ?? 4011),
    autoReply: true,
  });
  console.log(
    `Amazon Bedrock InvokeModel fake listening on ${fake.url} (POST /model/{modelId}/invoke); Ctrl-C stops it.`,
  );
  const stop = () => {
    void fake.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
