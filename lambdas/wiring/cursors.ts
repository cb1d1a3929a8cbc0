/* The stack's cursor seal: keys derived from the session signing key (functions with `sessionSecret`). */
import { type CursorSeal, cursorSeal } from '../http/cursors.ts';
import { sessionSigningKeyFromEnv } from './session-secret.ts';

export function cursorSealFromEnv(): CursorSeal {
  return cursorSeal(sessionSigningKeyFromEnv());
}
