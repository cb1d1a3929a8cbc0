/*
 * The structured JSON logger (Powertools) every Lambda logs with, with credential-like
 * keys redacted.
 */
import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger per Lambda. Request headers, bodies and credentials are never passed
 * to it; the keys below are redacted anyway in case a caller logs an object carelessly. Keys that
 * name a credential but hold no secret (`tokenId`, `tokenHint`, `sessionId`…) stay readable: a
 * person needs them to follow a failure.
 */
const SECRET_KEYS =
  /authorization|cookie|passw(?:or)?d|pwd|secret|token|api[-_]?key|subscription[-_]?key|signature|credential/i;
const READABLE_KEYS = /(?:id|ids|hint|count|type|expiresat|createdat|revokedat|lastusedat)$/i;

/** Whether a log attribute's value is withheld. */
export function isSecretLogKey(key: string): boolean {
  return SECRET_KEYS.test(key) && !READABLE_KEYS.test(key);
}

export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'pipeline-synthesis-api',
  jsonReplacerFn: (key: string, value: unknown) => (key && isSecretLogKey(key) ? '[redacted]' : value),
});
