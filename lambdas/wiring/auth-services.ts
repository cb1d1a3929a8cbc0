/*
 * What the auth handlers share, built once per container: the logger as the audit log and
 * the session dependencies (store, clock, signing key) of the session-issuing handlers.
 */
import type { AuditLog } from '../auth/ports.ts';
import { makeStartSession, type SessionDeps } from '../auth/sessions.ts';
import type { Clock } from '../core/ports/common.ts';
import { logger } from '../observability/logger.ts';
import { nanoidGenerator, systemClock } from './clock.ts';
import { authRepositoryFromEnv } from './repositories.ts';
import { sessionSigningKeyFromEnv } from './session-secret.ts';

/** The logger as the auth use cases' audit trail (they never pass it a secret). */
export const auditLog: AuditLog = {
  info: (message, attributes) => logger.info(message, attributes),
  warn: (message, attributes) => logger.warn(message, attributes),
};

/** What the session-issuing handlers share; built once per container. Tests pass their own clock. */
export function sessionServices(clock: Clock = systemClock) {
  const deps: SessionDeps = {
    auth: authRepositoryFromEnv(),
    clock,
    ids: nanoidGenerator,
    signingKey: sessionSigningKeyFromEnv(),
    audit: auditLog,
  };
  return { ...deps, startSession: makeStartSession(deps) };
}
