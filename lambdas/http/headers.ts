/**
 * A request header, case-insensitively: API Gateway keeps the client's casing. An empty value is
 * returned as such; callers decide whether empty means absent.
 */
export function findHeader(
  headers: Record<string, string | undefined> | null | undefined,
  name: string,
): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}
