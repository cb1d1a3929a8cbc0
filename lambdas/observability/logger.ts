/*
 * The structured JSON logger (Powertools) every Lambda logs with, with credential-like
 * keys redacted.
 */
import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger per Lambda. Request headers, bodies and credentials are never passed
 * to it; the keys below are redacted anyway in case a caller logs an object carelessly.
 */
const SECRET_KEYS = /authorization|cookie|password|token|secret|apikey|api_key/i;

export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'pipeline-synthesis-api',
  jsonReplacerFn: (key: string, value: unknown) => (key && SECRET_KEYS.test(key) ? '[redacted]' : value),
});
