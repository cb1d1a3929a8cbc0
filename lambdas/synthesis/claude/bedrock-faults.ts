/**
 * Amazon Bedrock's refusals of InvokeModel, by the error type it names (the x-amzn-ErrorType
 * header): which are permanent, with a message saying what to fix (model access, the IAM action,
 * the model id, the region), and which pass (throttling, a model not ready, an outage, a timeout).
 */
import Anthropic from '@anthropic-ai/sdk';
import { shorten } from '../text-budget.ts';
import type { Attempted } from './retries.ts';

/** What a provider's refusal means: fail the run with this message, or retry with this cause. */
export type ProviderFault = { permanent: string } | { transient: Attempted };

export interface BedrockTarget {
  /** The inference profile id or model id the worker invokes (bedrockModelId). */
  model: string;
  region: string;
}

const MESSAGE_BYTES = 300;

/** Bedrock's error type ("ThrottlingException"), from the header or the body; undefined when absent. */
export function bedrockErrorType(failure: InstanceType<typeof Anthropic.APIError>): string | undefined {
  const header = failure.headers?.get('x-amzn-errortype');
  const body = failure.error as { __type?: unknown; code?: unknown } | undefined;
  const raw = header ?? (typeof body?.__type === 'string' ? body.__type : undefined) ?? body?.code;
  if (typeof raw !== 'string' || raw === '') return undefined;
  // "ValidationException:http://internal.amazon.com/coral/…" or "com.amazon.bedrock#ValidationException".
  return raw.split(':')[0]?.split('#').pop();
}

function bedrockMessage(failure: InstanceType<typeof Anthropic.APIError>): string {
  const body = failure.error as { message?: unknown; Message?: unknown } | undefined;
  const text = body?.message ?? body?.Message ?? failure.apiMessage;
  return typeof text === 'string' && text !== '' ? `: ${shorten(text, MESSAGE_BYTES)}` : '';
}

const TRANSIENT: Record<string, Attempted['cause']> = {
  ThrottlingException: 'throttled',
  ServiceUnavailableException: 'unavailable',
  ModelNotReadyException: 'model_not_ready',
  ModelTimeoutException: 'timeout',
  InternalServerException: 'server_error',
};

const CREDENTIAL_ERRORS = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignatureException',
  'ExpiredTokenException',
  'MissingAuthenticationTokenException',
]);

/** A Validation error about the model id rather than the request's content. */
const ABOUT_THE_MODEL =
  /model identifier|model id|inference profile|on-demand throughput|model.*(not|isn't) (supported|available|enabled)/i;

/** The meaning of a Bedrock refusal, or undefined when it is none Bedrock names (the generic handling). */
export function bedrockFault(failure: unknown, target: BedrockTarget): ProviderFault | undefined {
  if (!(failure instanceof Anthropic.APIError) || failure.status === undefined) return undefined;
  const type = bedrockErrorType(failure);
  if (type === undefined) return undefined;
  const transient = TRANSIENT[type];
  if (transient !== undefined) return { transient: { cause: transient, status: failure.status } };
  const said = `${type}${bedrockMessage(failure)}`;
  const { model, region } = target;
  const permanent = (text: string): ProviderFault => ({ permanent: `${text} Then start a new run.` });
  if (type === 'AccessDeniedException') {
    return permanent(
      `Amazon Bedrock denied the call to ${model} in ${region} (${said}). Grant this account access to ` +
        `the model in the Bedrock console of ${region} (Model access), and check that the worker's role ` +
        'may call bedrock:InvokeModel on the inference profile and the foundation models it routes to ' +
        '(deploy with -c modelProvider=bedrock -c bedrockModelId=<the id> so the stack grants exactly those).',
    );
  }
  if (CREDENTIAL_ERRORS.has(type)) {
    return permanent(
      `Amazon Bedrock refused the worker's AWS credentials (${said}). Check the worker's role and ` +
        `that ${region} is the region the stack runs in.`,
    );
  }
  if (
    type === 'ResourceNotFoundException' ||
    (type === 'ValidationException' && ABOUT_THE_MODEL.test(said))
  ) {
    return permanent(
      `Amazon Bedrock has no model ${model} that this account can invoke in ${region} (${said}). Set ` +
        'bedrockModelId (BEDROCK_MODEL_ID locally) to an inference profile id listed by ' +
        `"aws bedrock list-inference-profiles --region ${region}" (such as us.anthropic.claude-sonnet-4-6-v1:0) ` +
        'or to a model id the region serves on demand.',
    );
  }
  if (type === 'ServiceQuotaExceededException') {
    return permanent(
      `Amazon Bedrock refused the call: a service quota of ${model} in ${region} is exceeded (${said}). ` +
        'Ask for a higher quota in the Service Quotas console, or lower ANTHROPIC_MAX_TOKENS.',
    );
  }
  if (failure.status >= 400 && failure.status < 500) {
    return permanent(
      `Amazon Bedrock refused the request to ${model} in ${region} as invalid (HTTP ${failure.status}, ${said}).`,
    );
  }
  return undefined;
}
