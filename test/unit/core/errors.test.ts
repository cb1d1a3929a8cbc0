/** The API's errors as a client sees them: the HTTP status, the wire code and the body, and the worker's faults. */
import { describe, expect, it } from 'vitest';
import {
  type ApiError,
  ConflictError,
  ForbiddenError,
  INTERNAL_ERROR_BODY,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  SynthesisFailure,
  TransientSynthesisError,
  UnauthorizedError,
  ValidationError,
} from '../../../lambdas/core/errors.ts';

describe('the API errors', () => {
  it.each<[() => ApiError, number, string, string, string]>([
    [() => new ValidationError('bad'), 400, 'VALIDATION_ERROR', 'ValidationError', 'bad'],
    [
      () => new UnauthorizedError(),
      401,
      'UNAUTHORIZED',
      'UnauthorizedError',
      'The credential is missing, invalid, expired or revoked.',
    ],
    [() => new UnauthorizedError('Log in again.'), 401, 'UNAUTHORIZED', 'UnauthorizedError', 'Log in again.'],
    [
      () => new ForbiddenError(),
      403,
      'FORBIDDEN',
      'ForbiddenError',
      'The credential has no permission for this resource.',
    ],
    [() => new ForbiddenError('Admins only.'), 403, 'FORBIDDEN', 'ForbiddenError', 'Admins only.'],
    [() => new NotFoundError('No pipeline p1.'), 404, 'NOT_FOUND', 'NotFoundError', 'No pipeline p1.'],
    [() => new ConflictError('The run is pending.'), 409, 'CONFLICT', 'ConflictError', 'The run is pending.'],
    [
      () => new PayloadTooLargeError('Too big.'),
      413,
      'PAYLOAD_TOO_LARGE',
      'PayloadTooLargeError',
      'Too big.',
    ],
    [() => new RateLimitedError('Slow down.'), 429, 'RATE_LIMITED', 'RateLimitedError', 'Slow down.'],
    [
      () => new ServiceUnavailableError('Queue down.'),
      503,
      'SERVICE_UNAVAILABLE',
      'ServiceUnavailableError',
      'Queue down.',
    ],
  ])('%s answers %i %s', (make, statusCode, code, name, message) => {
    // Built inside the test, so each run (and each mutant) constructs it afresh.
    const error = make();
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ statusCode, code, name, message });
    expect(JSON.parse(JSON.stringify(error))).toEqual({ error: code, message });
  });

  it('carries details into the body only when it has them', () => {
    const details = [{ path: 'name', message: 'Too short' }];
    expect(new ValidationError('Invalid body.', { details }).toJSON()).toEqual({
      error: 'VALIDATION_ERROR',
      message: 'Invalid body.',
      details,
    });
    expect(Object.keys(new ValidationError('Invalid body.').toJSON())).toEqual(['error', 'message']);
  });

  it('answers anything else with a body that says nothing about it', () => {
    expect(INTERNAL_ERROR_BODY).toEqual({ error: 'INTERNAL_ERROR', message: 'An internal error occurred.' });
  });
});

describe('the worker’s faults', () => {
  const usage = { model: 'claude-sonnet-4-5', inputTokens: 10, outputTokens: 2, attempts: 1 };

  it('a synthesis failure keeps its message for the run, what it cost, and its cause', () => {
    const cause = new Error('refused');
    const failure = new SynthesisFailure('The model refused.', { usage, cause });
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toMatchObject({ name: 'SynthesisFailure', message: 'The model refused.', usage, cause });
    expect(String(failure)).toBe('SynthesisFailure: The model refused.');
  });

  it('a synthesis failure without a cause or usage has neither', () => {
    const failure = new SynthesisFailure('No key.');
    expect(failure.usage).toBeUndefined();
    expect('cause' in failure).toBe(false);
  });

  it('a transient error says when to retry, what it cost and why', () => {
    const cause = new Error('529 overloaded');
    const transient = new TransientSynthesisError('Overloaded.', { usage, cause, retryAfterSeconds: 30 });
    expect(transient).toBeInstanceOf(Error);
    expect(transient).toMatchObject({
      name: 'TransientSynthesisError',
      message: 'Overloaded.',
      usage,
      cause,
      retryAfterSeconds: 30,
    });
    expect(String(transient)).toBe('TransientSynthesisError: Overloaded.');
  });

  it('a transient error without options leaves the backoff to the queue', () => {
    const transient = new TransientSynthesisError('Throttled.');
    expect(transient.retryAfterSeconds).toBeUndefined();
    expect(transient.usage).toBeUndefined();
    expect('cause' in transient).toBe(false);
  });
});

describe('errors keep their cause', () => {
  it('an API error carries the error it stands for, and never sends it', () => {
    const cause = Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
      name: 'ValidationException',
    });
    const error = new PayloadTooLargeError('The record is too large.', { cause });
    expect(error.cause).toBe(cause);
    expect('cause' in new PayloadTooLargeError('The record is too large.')).toBe(false);
    expect(JSON.stringify(error.toJSON())).not.toContain('ValidationException');
    expect(error.toJSON()).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: 'The record is too large.' });
  });

  it('a 503 says what happened in words and when to retry, without an exception name', () => {
    const error = new ServiceUnavailableError('The synthesis job could not be queued.', {
      cause: Object.assign(new Error('x'), { name: 'QueueDoesNotExist' }),
    });
    expect(error.retryAfterSeconds).toBe(5);
    expect(error.message).not.toMatch(/QueueDoesNotExist|Exception|Error\b/);
  });
});
