/*
 * Sign-in by email link: requesting one (answers the same whether or not the address has
 * an account) and exchanging the one-time, 15-minute token for a session.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { UnauthorizedError } from '../core/errors.ts';
import type { Clock } from '../core/ports/common.ts';
import { normalizeEmail } from './email-address.ts';
import type {
  AttemptLimit,
  AuditLog,
  AuthRepository,
  EmailSender,
  MagicLinkRecord,
  SessionMethod,
  User,
} from './ports.ts';
import { generateSecret, hashSecret, isWellFormedSecret } from './secret-token.ts';
import type { IssuedSession } from './sessions.ts';

export const MAGIC_LINK_PREFIX = 'psm_';
const MAGIC_LINK_LIFETIME_MS = 15 * 60_000;
/** Links per email address: enough for a typo'd inbox, too few to flood someone's mailbox. */
const MAGIC_LINK_REQUESTS: AttemptLimit = { limit: 5, windowMs: 15 * 60_000 };
/**
 * Every request answers no sooner than this, known address or not, so the time an email takes
 * to send does not tell an observer that the address has an account.
 */
export const MAGIC_LINK_MIN_RESPONSE_MS = 400;

export interface RequestMagicLinkDeps {
  /** Only what a request reads and writes: its function is given just these stores. */
  auth: Pick<AuthRepository, 'reserveAttempt' | 'findUserByEmail' | 'createMagicLink'>;
  clock: Clock;
  /** Resolved on first use: the sender and the app URL come from the environment. */
  email: () => EmailSender;
  appUrl: () => string;
  /** The path of the page a link opens (the magic-link page operation's), under the app URL. */
  pagePath: string;
  audit: AuditLog;
  minResponseMs?: number;
}

/** The link a user clicks: the magic-link page, which posts the token to the verify operation. */
export function magicLinkUrl(appUrl: string, pagePath: string, token: string): string {
  return `${appUrl.replace(/\/+$/, '')}${pagePath}?token=${encodeURIComponent(token)}`;
}

/**
 * Emails a one-time sign-in link when the address belongs to a user. The caller learns nothing:
 * an unknown address, a throttled one and a failed send all look like success.
 */
export function makeRequestMagicLink(deps: RequestMagicLinkDeps) {
  const minResponseMs = deps.minResponseMs ?? MAGIC_LINK_MIN_RESPONSE_MS;
  return async (rawEmail: string): Promise<void> => {
    const started = performance.now();
    try {
      await issue(deps, normalizeEmail(rawEmail));
    } finally {
      const remaining = minResponseMs - (performance.now() - started);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent; sleep(≤ 0) returns after about a millisecond, as skipping it does.
      if (remaining > 0) await sleep(remaining);
    }
  };
}

async function issue(deps: RequestMagicLinkDeps, email: string): Promise<void> {
  const now = deps.clock.now();
  const decision = await deps.auth.reserveAttempt(`MAGICLINK#${email}`, MAGIC_LINK_REQUESTS, now);
  if (!decision.allowed) {
    deps.audit.info('magic link refused', { reason: 'too many requests for the address' });
    return;
  }
  const user = await deps.auth.findUserByEmail(email);
  if (!user) return;
  const token = generateSecret(MAGIC_LINK_PREFIX);
  await deps.auth.createMagicLink({
    tokenHash: hashSecret(token),
    userId: user.userId,
    credentialsVersion: user.credentialsVersion ?? 0,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + MAGIC_LINK_LIFETIME_MS).toISOString(),
  });
  try {
    await deps.email().send({
      to: user.email,
      subject: 'Your sign-in link',
      text: [
        'Someone (hopefully you) asked to sign in to Pipeline Synthesis with this email address.',
        '',
        `Sign in: ${magicLinkUrl(deps.appUrl(), deps.pagePath, token)}`,
        '',
        `The link works once, within ${MAGIC_LINK_LIFETIME_MS / 60_000} minutes. If you did not ask for it, ignore this email.`,
        '',
      ].join('\n'),
    });
    deps.audit.info('magic link sent', { userId: user.userId });
  } catch (error) {
    // Answering an error here would tell the caller the address exists; the operator sees this.
    deps.audit.warn('magic link email failed', { userId: user.userId, errorClass: (error as Error).name });
  }
}

export interface VerifyMagicLinkDeps {
  auth: AuthRepository;
  clock: Clock;
  startSession: (user: User, method: SessionMethod, teamId?: string) => Promise<IssuedSession>;
  /** An invitation's link: adds the person to its team (auth/invitations.ts), whose session it starts. */
  acceptInvitation: (
    link: MagicLinkRecord & { invitationId: string },
  ) => Promise<{ user: User; teamId: string }>;
}

const invalidLink = () => new UnauthorizedError('The sign-in link is invalid, already used or expired.');

/**
 * Exchanges a magic-link token for a session; the token is consumed whether or not it has expired.
 * A link sent before the user's password last changed is refused like a used one.
 */
export function makeVerifyMagicLink({ auth, clock, startSession, acceptInvitation }: VerifyMagicLinkDeps) {
  return async (token: string, teamId?: string): Promise<IssuedSession> => {
    if (!isWellFormedSecret(MAGIC_LINK_PREFIX, token)) throw invalidLink();
    const link = await auth.consumeMagicLink(hashSecret(token));
    if (!link || Date.parse(link.expiresAt) <= clock.now().getTime()) throw invalidLink();
    if (link.invitationId !== undefined) {
      const { invitationId } = link;
      const joined = await acceptInvitation({ ...link, invitationId });
      return startSession(joined.user, 'magic-link', joined.teamId);
    }
    const user = await auth.getUser(link.userId);
    if (!user || (user.credentialsVersion ?? 0) !== link.credentialsVersion) throw invalidLink();
    return startSession(user, 'magic-link', teamId);
  };
}
