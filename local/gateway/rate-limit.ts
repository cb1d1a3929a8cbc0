/**
 * The stack's WAF rate rules (lib/rate-limits.ts), emulated by the local gateway: a token bucket
 * per Authorization header, per session cookie, and per client IP on /auth/*. A caller over its
 * rate gets API Gateway's THROTTLED response (429 RATE_LIMITED) with Retry-After.
 */
import { createHash } from 'node:crypto';
import type { AbuseLimits } from '../../lambdas/limits.ts';

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
  header(name: string): string | undefined;
}

export class LocalRateLimits {
  private readonly perCredential: TokenBuckets;
  private readonly authPerIp: TokenBuckets;

  constructor(limits: AbuseLimits) {
    this.perCredential = new TokenBuckets(limits.requestsPerSecondPerCredential, limits.burstPerCredential);
    this.authPerIp = new TokenBuckets(
      limits.authRequestsPerMinutePerIp / 60,
      limits.authRequestsPerMinutePerIp,
    );
  }

  /** 0 when the request may pass, else the Retry-After seconds. */
  check(request: RateLimitedRequest, now = Date.now()): number {
    const keys: Array<[TokenBuckets, string]> = [];
    const authorization = request.header('authorization');
    if (authorization) keys.push([this.perCredential, `h:${digest(authorization)}`]);
    const session = /(?:^|;\s*)ps_session=([^;]+)/.exec(request.header('cookie') ?? '')?.[1];
    if (session) keys.push([this.perCredential, `c:${digest(session)}`]);
    if (request.path.includes('/auth/')) keys.push([this.authPerIp, `ip:${request.sourceIp}`]);
    let wait = 0;
    for (const [buckets, key] of keys) wait = Math.max(wait, buckets.take(key, now));
    return wait;
  }
}

/** Credentials are keyed by their hash: the gateway keeps no secret in memory longer than a request. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
