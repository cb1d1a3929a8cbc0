/*
 * OTLP/HTTP's transport rules for the trace and log endpoints: the body's bytes (base64 through API
 * Gateway's binary media types), gzip with a bound on what it inflates to, the decoder by content
 * type, and the export response (ExportTraceServiceResponse, ExportLogsServiceResponse) in the
 * request's own encoding.
 */
import { gunzipSync, constants as zlibConstants } from 'node:zlib';
import { PayloadTooLargeError, ValidationError } from '../core/errors.ts';
import type { HttpEvent, HttpResult } from '../http/response.ts';
import { STRICT_TRANSPORT_SECURITY } from '../http/response.ts';
import {
  countPrefix,
  type DecodedRequest,
  decodeJson,
  decodeProtobuf,
  encodeResponse,
  UndecodableBodyError,
} from './decode.ts';
import { type DecodedLogs, decodeLogsJson, decodeLogsProtobuf } from './decode-logs.ts';
import { LOG_WALK, OverLimitError, TRACE_WALK } from './limits.ts';

/** API Gateway's payload limit, which the body arrives within. */
export const PLATFORM_BODY_BYTES = 10 * 1024 * 1024;
/** The most a gzip body may inflate to: beyond it the request is a 413 (a gzip bomb stops here). */
export const INFLATED_BODY_BYTES = 32 * 1024 * 1024;

export type OtlpEncoding = 'protobuf' | 'json';
/** The signals taken: traces, and log records (evaluation results). */
export type OtlpSignal = 'traces' | 'logs';

const header = (event: HttpEvent, name: string) => {
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name) return value ?? undefined;
  }
  return undefined;
};

/** The encoding the request says it is in; a 400 for any other content type. */
export function encodingOf(event: HttpEvent): OtlpEncoding {
  const type = (header(event, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  throw new ValidationError(
    `OTLP/HTTP bodies are application/x-protobuf (or application/protobuf) or application/json, not ${JSON.stringify(type ?? '')}.`,
  );
}

/** The request body as bytes, inflated when it is gzip (its first inflated bytes counted as `signal`'s). */
export function bodyOf(event: HttpEvent, signal: OtlpSignal = 'traces'): Buffer {
  const raw = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (raw.length > PLATFORM_BODY_BYTES) {
    throw new PayloadTooLargeError(
      `The body exceeds API Gateway's payload limit of 10 MB: send smaller batches.`,
    );
  }
  const encoding = (header(event, 'content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return raw;
  if (encoding !== 'gzip') {
    throw new ValidationError(
      `Content-Encoding ${JSON.stringify(encoding)} is not accepted: send gzip or none.`,
    );
  }
  // A platform that inflated the body already hands it over without gzip's magic bytes.
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  countFirstInflated(raw, encodingOf(event), signal);
  try {
    return gunzipSync(raw, { maxOutputLength: INFLATED_BODY_BYTES });
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new PayloadTooLargeError(
        `The gzip body inflates past ${INFLATED_BODY_BYTES / 1024 / 1024} MB: send smaller batches.`,
        { cause: error },
      );
    }
    throw new ValidationError('The body is not valid gzip (Content-Encoding: gzip).', { cause: error });
  }
}

/** Gzip bytes counted first: they inflate to at most about 2 MB (DEFLATE's ratio is at most 1032:1). */
const FIRST_GZIP_BYTES = 2048;

/**
 * The first bytes of a gzip body inflated and counted: a bomb already past a limit there (a
 * request's spans, values, nesting) is refused before the rest is inflated, a few milliseconds
 * instead of inflating up to 32 MB.
 */
function countFirstInflated(raw: Buffer, encoding: OtlpEncoding, signal: OtlpSignal): void {
  let first: Buffer;
  try {
    first = gunzipSync(raw.subarray(0, FIRST_GZIP_BYTES), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
  } catch {
    return; // What is wrong with the gzip is said by inflating it whole.
  }
  withLimits(() => countPrefix(first, encoding, signal === 'logs' ? LOG_WALK : TRACE_WALK));
}

/** `read`'s result; a count past a limit of limits.ts is a 413 naming it (or a 400 for nesting). */
function withLimits<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof OverLimitError) {
      throw error.status === 413
        ? new PayloadTooLargeError(error.message, { cause: error })
        : new ValidationError(error.message, { cause: error });
    }
    throw error;
  }
}

/**
 * The request's spans; an undecodable body is a 400 (OTLP: not retryable), a request past a count
 * of limits.ts a 413 naming it (or a 400 for values nested too deep), found while it is read.
 */
export function decodeRequest(body: Buffer, encoding: OtlpEncoding): DecodedRequest {
  return decodedWithin(() =>
    encoding === 'protobuf' ? decodeProtobuf(body) : decodeJson(body.toString('utf8')),
  );
}

/** The request's log records: decoded, counted and refused as decodeRequest does spans. */
export function decodeLogsRequest(body: Buffer, encoding: OtlpEncoding): DecodedLogs {
  return decodedWithin(() =>
    encoding === 'protobuf' ? decodeLogsProtobuf(body) : decodeLogsJson(body.toString('utf8')),
  );
}

/** A decoding within the limits (withLimits), an undecodable body a 400. */
function decodedWithin<T>(decode: () => T): T {
  try {
    return withLimits(decode);
  } catch (error) {
    if (error instanceof UndecodableBodyError) throw new ValidationError(error.message, { cause: error });
    throw error;
  }
}

/** The export response, with a partial success when spans (log records) were refused. */
export function exportResponse(
  encoding: OtlpEncoding,
  rejected: number,
  reasons: Iterable<string>,
  signal: OtlpSignal = 'traces',
): HttpResult {
  const what = signal === 'logs' ? 'log records' : 'spans';
  const errorMessage = `${rejected} ${what} refused: ${[...reasons].join('; ')}.`;
  const partialSuccess = rejected > 0 ? { rejected, errorMessage } : undefined;
  const headers = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...STRICT_TRANSPORT_SECURITY,
  };
  if (encoding === 'json') {
    return {
      statusCode: 200,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(
        partialSuccess
          ? {
              partialSuccess: {
                [signal === 'logs' ? 'rejectedLogRecords' : 'rejectedSpans']: rejected,
                errorMessage,
              },
            }
          : {},
      ),
    };
  }
  return {
    statusCode: 200,
    headers: { ...headers, 'content-type': 'application/x-protobuf' },
    body: Buffer.from(encodeResponse(partialSuccess)).toString('base64'),
    isBase64Encoded: true,
  };
}
