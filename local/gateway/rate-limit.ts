/**
 * The stack's WAF rate rules (lib/rate-limits.ts), emulated by the local gateway: a token bucket
 * per credential (the Bearer token or the session cookie, however the header is spelled), per
 * client IP on /auth/*, and per team for evaluations (exactly the routes of the operations declared
 * `rateLimit: 'evaluation'`: serving-configuration, OFREP), which the credential's bucket does not count. A caller over its rate gets API Gateway's THROTTLED
 * response (429 RATE_LIMITED) with Retry-After.
 */
import { createHash } from 'node:crypto';
import { parseCookieHeader } from '../../lambdas/http/cookies.ts';
import { bearerSecret, SESSION_COOKIE } from '../../lambdas/http/session-cookies.ts';
import { type AbuseLimits, evaluationRouteMatcher } from '../../lambdas/limits.ts';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Refills `ratePerSecond` tokens a second up to `capacity`; each request takes one. */
class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly capacity: number,
  ) {}

  /** 0 when the request may pass, else the seconds until a token is back. */
  take(key: string, now: number): number {
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, updatedAt: now };
    bucket.tokens = Math.min(
      this.capacity,
      bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.ratePerSecond,
    );
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }
}

export interface RateLimitedRequest {
  path: string;
  sourceIp: string;
  /** Every value of a header, in order (a repeated header is several). */
  headerValues(name: string): readonly string[];
}

/** WAF's LOWERCASE then COMPRESS_WHITE_SPACE, the rule's text transformations. */
function normalizedText(value: string): string {
  return value.toLowerCase().replace(/[\s\u00a0]+/g, ' ');
}

/**
 * The bucket of the credential a request presents: its token, however `Bearer` is spelled and
 * spaced; for a header that carries no token (or several headers), its normalized text.
 */
export function credentialKeys(request: RateLimitedRequest): string[] {
  const keys = new Set<string>();
  // A blank header is no header, as for the authorizer.
  const authorization = request.headerValues('authorization').filter((value) => value.trim() !== '');
  if (authorization.length > 0) {
    const token = authorization.length === 1 ? bearerSecret(authorization[0] ?? '') : undefined;
    keys.add(
      token === undefined ? `h:${digest(normalizedText(authorization.join(', ')))}` : `t:${digest(token)}`,
    );
  }
  const session = parseCookieHeader(request.headerValues('cookie').join('; ')).get(SESSION_COOKIE);
  if (session) keys.add(`t:${digest(session)}`);
  return [...keys];
}

export class LocalRateLimits {
  private readonly perCredential: TokenBuckets;
  private readonly authPerIp: TokenBuckets;
  private readonly evaluationsPerTeam: TokenBuckets;
  private readonly isEvaluation: (path: string) => boolean;

  /** `evaluationPaths`: the path templates of the evaluation operations (declaration.ts evaluationPaths). */
  constructor(limits: AbuseLimits, evaluationPaths: readonly string[]) {
    this.isEvaluation = evaluationRouteMatcher(evaluationPaths);
    this.perCredential = new TokenBuckets(limits.requestsPerSecondPerCredential, limits.burstPerCredential);
    this.evaluationsPerTeam = new TokenBuckets(
      limits.servingRequestsPerSecondPerTeam,
      limits.servingBurstPerTeam,
    );
    this.authPerIp = new TokenBuckets(
      limits.authRequestsPerMinutePerIp / 60,
      limits.authRequestsPerMinutePerIp,
    );
  }

  /**
   * 0 when the request may pass, else the Retry-After seconds. An evaluation is counted after the
   * authorizer named its team (checkEvaluation), not here.
   */
  check(request: RateLimitedRequest, now = Date.now()): number {
    const evaluation = this.isEvaluation(request.path);
    const keys = evaluation
      ? []
      : credentialKeys(request).map((key): [TokenBuckets, string] => [this.perCredential, key]);
    if (request.path.includes('/auth/')) keys.push([this.authPerIp, `ip:${request.sourceIp}`]);
    let wait = 0;
    for (const [buckets, key] of keys) wait = Math.max(wait, buckets.take(key, now));
    return wait;
  }

  /** For an evaluation of `teamId`: 0 when it may pass, else the Retry-After seconds. */
  checkEvaluation(path: string, teamId: string, now = Date.now()): number {
    return this.isEvaluation(path) ? this.evaluationsPerTeam.take(`team:${teamId}`, now) : 0;
  }
}

/** Credentials are keyed by their hash: the gateway keeps no secret in memory longer than a request. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
