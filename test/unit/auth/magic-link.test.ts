import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MAGIC_LINK_MIN_RESPONSE_MS,
  magicLinkUrl,
  makeRequestMagicLink,
  makeVerifyMagicLink,
} from '../../../lambdas/auth/magic-link.ts';
import type { SessionMethod, User } from '../../../lambdas/auth/ports.ts';
import { generateSecret, hashSecret, isWellFormedSecret } from '../../../lambdas/auth/secret-token.ts';
import type { IssuedSession } from '../../../lambdas/auth/sessions.ts';
import {
  at,
  FakeAuthRepository,
  FakeClock,
  RecordingAudit,
  RecordingEmailSender,
  refusalOf,
  seedMember,
} from './fakes.ts';

const MINUTE = 60_000;
const INVALID = 'The sign-in link is invalid, already used or expired.';

let repo: FakeAuthRepository;
let clock: FakeClock;
let audit: RecordingAudit;
let outbox: RecordingEmailSender;
let request: ReturnType<typeof makeRequestMagicLink>;

beforeEach(async () => {
  repo = new FakeAuthRepository();
  clock = new FakeClock();
  audit = new RecordingAudit();
  outbox = new RecordingEmailSender();
  request = makeRequestMagicLink({
    auth: repo,
    clock,
    email: () => outbox,
    appUrl: () => 'https://app.example.test/',
    pagePath: '/auth/magic-link',
    audit,
    minResponseMs: 0,
  });
  await seedMember(repo, { email: 'ada@example.test' });
});

const tokenIn = (text: string) => decodeURIComponent(/token=([^\s]+)/.exec(text)?.[1] ?? '');

describe('asking for a sign-in link', () => {
  it('emails a one-time link valid for 15 minutes, storing only its hash', async () => {
    await request(' Ada@Example.TEST ');
    expect(outbox.sent).toHaveLength(1);
    const [email] = outbox.sent;
    const token = tokenIn(email?.text ?? '');
    expect(isWellFormedSecret('psm_', token)).toBe(true);
    expect(email).toEqual({
      to: 'ada@example.test',
      subject: 'Your sign-in link',
      text: [
        'Someone (hopefully you) asked to sign in to Pipeline Synthesis with this email address.',
        '',
        `Sign in: https://app.example.test/auth/magic-link?token=${token}`,
        '',
        'The link works once, within 15 minutes. If you did not ask for it, ignore this email.',
        '',
      ].join('\n'),
    });
    expect([...repo.magicLinks.values()]).toEqual([
      {
        tokenHash: hashSecret(token),
        userId: 'user-ada',
        credentialsVersion: 0,
        createdAt: at(0),
        expiresAt: at(15 * MINUTE),
      },
    ]);
    expect(audit.entries).toEqual([
      { level: 'info', message: 'magic link sent', attributes: { userId: 'user-ada' } },
    ]);
  });

  it('answers the same for an unknown address, and sends nothing', async () => {
    await expect(request('nobody@example.test')).resolves.toBeUndefined();
    expect(outbox.sent).toEqual([]);
    expect(repo.magicLinks.size).toBe(0);
  });

  it('sends 5 links per address in 15 minutes, then silently none, without touching other addresses', async () => {
    await seedMember(repo, { userId: 'user-bob', email: 'bob@example.test' });
    for (let i = 0; i < 6; i++) await request(i % 2 ? 'ADA@example.test' : 'ada@example.test');
    expect(outbox.sent).toHaveLength(5);
    expect(audit.entries.at(-1)).toEqual({
      level: 'info',
      message: 'magic link refused',
      attributes: { reason: 'too many requests for the address' },
    });
    await request('bob@example.test');
    expect(outbox.sent.map((email) => email.to)).toContain('bob@example.test');
    clock.advance(15 * MINUTE);
    await request('ada@example.test');
    expect(outbox.sent).toHaveLength(7);
  });

  it('does not count against password attempts', async () => {
    for (let i = 0; i < 6; i++) await request('ada@example.test');
    expect(
      await repo.reserveAttempt('LOGIN#ada@example.test', { limit: 1, windowMs: MINUTE }, clock.now()),
    ).toEqual({
      allowed: true,
    });
  });

  it('looks like success when the email cannot be sent; the operator is told', async () => {
    outbox.failWith = Object.assign(new Error('SES says no'), { name: 'MessageRejected' });
    await expect(request('ada@example.test')).resolves.toBeUndefined();
    expect(audit.entries).toEqual([
      {
        level: 'warn',
        message: 'magic link email failed',
        attributes: { userId: 'user-ada', errorClass: 'MessageRejected' },
      },
    ]);
  });
});

describe('the time a request takes', () => {
  const timed = async (minResponseMs: number | undefined, email: string, slowSendMs = 0) => {
    const slow = {
      send: async () => {
        await sleep(slowSendMs);
      },
    };
    const asking = makeRequestMagicLink({
      auth: repo,
      clock,
      email: () => slow,
      appUrl: () => 'https://app.example.test',
      pagePath: '/auth/magic-link',
      audit,
      ...(minResponseMs === undefined ? {} : { minResponseMs }),
    });
    const started = performance.now();
    await asking(email).catch(() => undefined);
    return performance.now() - started;
  };

  it('is at least 400 ms by default, even for an unknown address', async () => {
    expect(await timed(undefined, 'nobody@example.test')).toBeGreaterThanOrEqual(
      MAGIC_LINK_MIN_RESPONSE_MS - 5,
    );
  });

  it('includes the time the email took, rather than adding to it', async () => {
    // Padding added after a 180 ms email would take about 380 ms; included, about 200 ms.
    const elapsed = await timed(200, 'ada@example.test', 180);
    expect(elapsed).toBeGreaterThanOrEqual(195);
    expect(elapsed).toBeLessThan(330);
  });

  it('is kept even when the store fails, and the failure still surfaces', async () => {
    repo.reserveAttempt = async () => {
      throw new Error('store down');
    };
    const asking = makeRequestMagicLink({
      auth: repo,
      clock,
      email: () => outbox,
      appUrl: () => 'https://app.example.test',
      pagePath: '/auth/magic-link',
      audit,
      minResponseMs: 120,
    });
    const started = performance.now();
    await expect(asking('ada@example.test')).rejects.toThrow('store down');
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });
});

describe('the link', () => {
  it('points at the app’s page, whatever slashes the app URL ends with, with the token encoded', () => {
    expect(magicLinkUrl('https://app.example.test//', '/auth/magic-link', 'psm_a+b')).toBe(
      'https://app.example.test/auth/magic-link?token=psm_a%2Bb',
    );
    expect(magicLinkUrl('https://app.example.test', '/auth/magic-link', 'psm_x')).toBe(
      'https://app.example.test/auth/magic-link?token=psm_x',
    );
  });
});

describe('following the link', () => {
  let started: Array<{ userId: string; method: SessionMethod; teamId: string | undefined }>;
  let verify: ReturnType<typeof makeVerifyMagicLink>;
  let token: string;

  beforeEach(async () => {
    started = [];
    const startSession = async (user: User, method: SessionMethod, teamId?: string) => {
      started.push({ userId: user.userId, method, teamId });
      return { sessionId: `session-${started.length}` } as IssuedSession;
    };
    const acceptInvitation = async () => {
      throw new Error('these links carry no invitation');
    };
    verify = makeVerifyMagicLink({ auth: repo, clock, startSession, acceptInvitation });
    await request('ada@example.test');
    token = tokenIn(outbox.sent[0]?.text ?? '');
  });

  const refusal = async (promise: Promise<unknown>) => {
    const { status, message } = await refusalOf(promise);
    expect(status).toBe(401);
    return message;
  };

  it('starts a magic-link session in the team asked for, once', async () => {
    await expect(verify(token, 'team-a')).resolves.toEqual({ sessionId: 'session-1' });
    expect(started).toEqual([{ userId: 'user-ada', method: 'magic-link', teamId: 'team-a' }]);
    expect(await refusal(verify(token))).toBe(INVALID);
  });

  it('works until the last millisecond of its 15 minutes, not at their end', async () => {
    clock.advance(15 * MINUTE - 1);
    await expect(verify(token)).resolves.toEqual({ sessionId: 'session-1' });

    await request('ada@example.test');
    const second = tokenIn(outbox.sent[1]?.text ?? '');
    clock.advance(15 * MINUTE);
    expect(await refusal(verify(second))).toBe(INVALID);
    // An expired link is used up all the same.
    expect(repo.magicLinks.size).toBe(0);
  });

  it('is refused once the password changed after it was sent; a link sent after the change works', async () => {
    await repo.setPasswordHash('user-ada', 'a new hash');
    expect(await refusal(verify(token))).toBe(INVALID);
    expect(started).toEqual([]);

    await request('ada@example.test');
    const after = tokenIn(outbox.sent[1]?.text ?? '');
    expect([...repo.magicLinks.values()].map((link) => link.credentialsVersion)).toEqual([1]);
    await expect(verify(after)).resolves.toEqual({ sessionId: 'session-1' });
  });

  it('is refused when malformed, never issued, or its user is gone', async () => {
    const consumed = vi.spyOn(repo, 'consumeMagicLink');
    expect(await refusal(verify(`${token.slice(0, -1)}-`))).toBe(INVALID);
    // A mistyped or made-up link costs no store operation.
    expect(consumed).not.toHaveBeenCalled();
    expect(await refusal(verify('psm_nonsense'))).toBe(INVALID);
    expect(await refusal(verify(token.replace(/^psm_/, 'psr_')))).toBe(INVALID);
    expect(await refusal(verify(generateSecret('psm_')))).toBe(INVALID);
    repo.users.clear();
    expect(await refusal(verify(token))).toBe(INVALID);
    expect(started).toEqual([]);
  });
});
