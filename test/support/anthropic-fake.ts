import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { makePromptCache } from './prompt-cache-fake.ts';

/**
 * A local fake of the Anthropic Messages API: a real HTTP server on 127.0.0.1 that the real SDK
 * reaches through `baseURL`. Each POST /v1/messages takes the next scripted reply from a queue
 * and is recorded (headers and parsed body) for assertions. An empty queue answers 500, so an
 * unexpected request shows up as a failure instead of hanging a test.
 */

export type FakeReply =
  | { kind: 'message'; body: Record<string, unknown> }
  | { kind: 'error'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  /** Never answers; the connection is closed when the fake stops. */
  | { kind: 'hang' };

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, to search for strings that must not be sent. */
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are asserted field by field
  body: any;
  receivedAt: number;
}

export interface AnthropicFake {
  /** The base URL to give the SDK (ANTHROPIC_BASE_URL). */
  url: string;
  requests: ReceivedRequest[];
  /** Appends replies; each request takes the first one left. */
  script(...replies: FakeReply[]): void;
  /** Forgets the recorded requests and any replies left. */
  reset(): void;
  close(): Promise<void>;
}

let messageCounter = 0;

/** A reply that calls `submit_synthesis` with `input`. */
export function toolReply(
  input: unknown,
  options: { inputTokens?: number; outputTokens?: number; stopReason?: string; toolName?: string } = {},
): FakeReply {
  messageCounter += 1;
  return {
    kind: 'message',
    body: {
      id: `msg_fake_${messageCounter}`,
      type: 'message',
      role: 'assistant',
      model: 'fake-model',
      content: [
        {
          type: 'tool_use',
          id: `toolu_fake_${messageCounter}`,
          name: options.toolName ?? 'submit_synthesis',
          input,
        },
      ],
      stop_reason: options.stopReason ?? 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: options.inputTokens ?? 1_000, output_tokens: options.outputTokens ?? 200 },
    },
  };
}

/** A reply with only text, as a model that ignored the forced tool would send. */
export function textReply(text: string): FakeReply {
  messageCounter += 1;
  return {
    kind: 'message',
    body: {
      id: `msg_fake_${messageCounter}`,
      type: 'message',
      role: 'assistant',
      model: 'fake-model',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1_000, output_tokens: 50 },
    },
  };
}

/** An API error answer in the shape the Messages API sends; the helpers below are the usual ones. */
export const errorReply = (
  status: number,
  errorType: string,
  message: string,
  headers?: Record<string, string>,
): FakeReply => ({ kind: 'error', status, errorType, message, ...(headers ? { headers } : {}) });

export const rateLimited = (retryAfterSeconds?: number): FakeReply =>
  errorReply(
    429,
    'rate_limit_error',
    'Number of request tokens has exceeded your per-minute rate limit',
    retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
  );
export const overloaded = (): FakeReply => errorReply(529, 'overloaded_error', 'Overloaded');
export const serverError = (): FakeReply => errorReply(500, 'api_error', 'Internal server error');
export const unauthorized = (): FakeReply => errorReply(401, 'authentication_error', 'invalid x-api-key');
export const hang = (): FakeReply => ({ kind: 'hang' });

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', ...headers });
  response.end(JSON.stringify(body));
}

/** The text of a request's first user message, sent as a string or as content blocks. */
export function promptText(body: unknown): string {
  const content = (body as { messages?: { content?: unknown }[] } | undefined)?.messages?.[0]?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: { type?: unknown; text?: unknown }) =>
      block.type === 'text' && typeof block.text === 'string' ? block.text : '',
    )
    .join('');
}

/**
 * A plausible reply to any synthesis request, for running the local stack against the fake: one
 * finding citing the first shown signals and, when a slot has a temperature above 0, a change that
 * halves it. Built from the prompt text, so it only ever names signals and slots it was shown.
 */
export function autoReply(body: unknown): FakeReply {
  const text = promptText(body);
  const refs = [...text.matchAll(/^\[(\d+)\] /gm)].map((match) => Number(match[1])).slice(0, 5);
  let target: { slotId: string; temperature: number } | undefined;
  for (const match of text.matchAll(/^Slot "([^"]+)".*\n {2}settings: (.*)$/gm)) {
    try {
      const settings: unknown = JSON.parse(match[2] ?? '');
      const temperature = (settings as { temperature?: unknown }).temperature;
      if (typeof temperature === 'number' && temperature > 0) {
        target = { slotId: match[1] ?? '', temperature };
        break;
      }
    } catch {
      // Shortened settings are not JSON; such a slot is simply not a candidate.
    }
  }
  const change = target && {
    id: '1',
    slotId: target.slotId,
    description: `Lower temperature from ${target.temperature} to ${Math.round((target.temperature / 2) * 100) / 100}.`,
    rationale: 'A lower temperature makes the output more predictable (reply of the local Anthropic fake).',
    findingIds: ['1'],
    patch: { temperature: Math.round((target.temperature / 2) * 100) / 100 },
  };
  return toolReply({
    diagnosis: {
      summary: `The local Anthropic fake read ${refs.length} of the shown signals; this is not a real diagnosis.`,
      findings: [{ id: '1', description: 'The most severe recent signals, as shown.', signalRefs: refs }],
    },
    changes: change ? [change] : [],
    warnings: [{ type: 'fake_model', message: 'Generated by the local Anthropic fake, not by Claude.' }],
  });
}

export interface AnthropicFakeOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Answer requests no reply was scripted for with autoReply instead of a 500. */
  autoReply?: boolean;
  /** Milliseconds before each answer: the model's time, for the bench and slow runs. */
  latencyMs?: number;
  /** Report usage from the request's size and a prompt cache (prompt-cache-fake.ts). */
  promptCache?: boolean;
}

/** Starts the fake on 127.0.0.1. */
export async function startAnthropicFake(options: AnthropicFakeOptions = {}): Promise<AnthropicFake> {
  const queue: FakeReply[] = [];
  const requests: ReceivedRequest[] = [];
  const cache = makePromptCache();

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const path = request.url ?? '';
      if (request.method !== 'POST' || !path.startsWith('/v1/messages')) {
        sendJson(response, 404, {
          type: 'error',
          error: { type: 'not_found_error', message: `No route ${path}` },
        });
        return;
      }
      requests.push({
        method: request.method,
        path,
        headers: request.headers,
        raw,
        body,
        receivedAt: Date.now(),
      });
      const reply = queue.shift() ?? (options.autoReply ? autoReply(body) : undefined);
      if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      if (reply === undefined) {
        sendJson(
          response,
          500,
          { type: 'error', error: { type: 'api_error', message: 'The fake has no scripted reply.' } },
          {
            'x-should-retry': 'false',
          },
        );
        return;
      }
      if (reply.kind === 'hang') return;
      if (reply.kind === 'error') {
        sendJson(
          response,
          reply.status,
          { type: 'error', error: { type: reply.errorType, message: reply.message } },
          reply.headers,
        );
        return;
      }
      if (!options.promptCache) {
        sendJson(response, 200, reply.body);
        return;
      }
      const output = (reply.body.usage as { output_tokens?: number } | undefined)?.output_tokens ?? 0;
      sendJson(response, 200, { ...reply.body, usage: cache.usage(body, output) });
    });
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => {
      queue.push(...replies);
    },
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      cache.clear();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// `npx tsx test/support/anthropic-fake.ts [port]` serves the fake with automatic replies, so the
// local stack can run claude-v1 offline (ANTHROPIC_BASE_URL=http://127.0.0.1:<port>).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fake = await startAnthropicFake({
    port: Number(process.argv[2] ?? process.env.PORT ?? 4010),
    autoReply: true,
  });
  console.log(`Anthropic Messages API fake listening on ${fake.url} (POST /v1/messages); Ctrl-C stops it.`);
  const stop = () => {
    void fake.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
