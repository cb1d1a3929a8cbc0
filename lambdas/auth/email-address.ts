/** Email addresses are compared, looked up and throttled in one form: trimmed, lower-case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
