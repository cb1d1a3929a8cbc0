/**
 * How claude-v1 reaches Claude: the Anthropic API with a key (Secrets Manager, or the environment
 * locally), or Amazon Bedrock with the worker role's credentials. A connection opens one client per
 * run and says, in words, which of the provider's refusals no retry can mend.
 */
import Anthropic from '@anthropic-ai/sdk';
import { SynthesisFailure } from '../../core/errors.ts';
import { bedrockFault, type ProviderFault } from './bedrock-faults.ts';

/** The part of an Anthropic client claude-v1 uses; AnthropicBedrock has the same `messages`. */
export interface MessagesClient {
  readonly messages: Pick<Anthropic.Messages, 'create'>;
}

/** Where the API key comes from; `refresh` is called once per run when the API answers 401. */
export interface ApiKeySource {
  /** Names where the key is configured, for error messages; never the key. */
  readonly description: string;
  get(signal?: AbortSignal): Promise<string>;
  refresh(signal?: AbortSignal): Promise<string>;
}

export interface AnthropicAccess {
  readonly provider?: 'anthropic';
  /** Undefined when no key is configured: runs that name claude-v1 then fail with a clear message. */
  readonly keys: ApiKeySource | undefined;
  readonly baseURL?: string | undefined;
}

export interface BedrockAccess {
  readonly provider: 'bedrock';
  /** The stack's region (AWS_REGION), named in messages. */
  readonly region: string;
  /**
   * The Bedrock client (wiring/bedrock-client.ts), built on the first run: the Bedrock SDK is an
   * on-demand part of its own, loaded only when the provider is bedrock.
   */
  readonly client: () => Promise<MessagesClient>;
}

export type ModelAccess = AnthropicAccess | BedrockAccess;

/** The client of one run, and what to do when the provider refuses its credentials. */
export interface RunClient {
  client(): MessagesClient;
  /** After a 401: reads the credentials again, once per run; true when there is something new to try. */
  refresh(): Promise<boolean>;
  /** A refusal no retry mends, in words naming what to fix; undefined for the generic handling. */
  fault(failure: unknown): ProviderFault | undefined;
}

export interface Connection {
  readonly provider: 'anthropic' | 'bedrock';
  /** Opens the run's client; `within` bounds a read of the credentials by the run's budget. */
  open(within: <T>(read: (signal: AbortSignal) => Promise<T>) => Promise<T>): Promise<RunClient>;
}

const NOT_CONFIGURED =
  'claude-v1 is not configured: no Anthropic API key (set ANTHROPIC_API_KEY locally, or ' +
  'ANTHROPIC_SECRET_ARN on AWS). Start the run with synthesisHandler "heuristic-v1" instead.';

export interface ConnectionSettings {
  model: string;
  requestTimeoutMs: number;
}

/** The connection for `access`. */
export function connectionFor(access: ModelAccess, settings: ConnectionSettings): Connection {
  return access.provider === 'bedrock'
    ? bedrockConnection(access, settings.model)
    : anthropicConnection(access, settings.requestTimeoutMs);
}

function anthropicConnection(access: AnthropicAccess, requestTimeoutMs: number): Connection {
  let cached: { key: string; anthropic: Anthropic } | undefined;
  const clientFor = (key: string): Anthropic => {
    if (cached?.key !== key) {
      // Retries are ours (request.ts), so that they share the run's budget and are counted.
      const anthropic = new Anthropic({
        apiKey: key,
        authToken: null,
        baseURL: access.baseURL ?? null,
        maxRetries: 0,
        timeout: requestTimeoutMs,
      });
      cached = { key, anthropic };
    }
    return cached.anthropic;
  };
  return {
    provider: 'anthropic',
    async open(within) {
      const keys = access.keys;
      if (keys === undefined) throw new SynthesisFailure(NOT_CONFIGURED);
      let key = await within((signal) => keys.get(signal));
      let refreshed = false;
      return {
        client: () => clientFor(key),
        async refresh() {
          // The secret may have been rotated since it was cached: read it again, once per run.
          if (refreshed) return false;
          refreshed = true;
          const stale = key;
          key = await within((signal) => keys.refresh(signal));
          return key !== stale;
        },
        fault: (failure) =>
          failure instanceof Anthropic.AuthenticationError
            ? {
                permanent:
                  `The model API rejected the API key (HTTP 401); store a valid key in ${keys.description} ` +
                  'and start a new run.',
              }
            : undefined,
      };
    },
  };
}

function bedrockConnection(access: BedrockAccess, model: string): Connection {
  let client: Promise<MessagesClient> | undefined;
  return {
    provider: 'bedrock',
    async open() {
      // A failed load is not kept: the next run tries again.
      client ??= access.client().catch((error: unknown) => {
        client = undefined;
        throw error;
      });
      const ready = await client;
      return {
        client: () => ready,
        // The role's credentials come from the environment; there is no key to read again.
        refresh: async () => false,
        fault: (failure) => bedrockFault(failure, { model, region: access.region }),
      };
    },
  };
}
