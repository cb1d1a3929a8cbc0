/**
 * The application's only way to the API: same-origin fetch with the HttpOnly session cookies
 * (nothing secret is ever visible to this code), `X-Requested-With` on every request that changes
 * state, one refresh and one retry on a 401, and `{error, message}` bodies turned into ApiError.
 */
import type { SessionSummary } from './types.ts';

/** The API's base URL: the application lives at `<base>/app/`, so the API is one level up. */
export const API_BASE = new URL('../', document.baseURI);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

type Method = 'GET' | 'POST' | 'DELETE';

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** For the auth calls themselves: a 401 is the answer, not a reason to refresh. */
  noRefresh?: boolean;
}

function send(method: Method, path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  // A foreign page cannot add this header without a CORS preflight, which the API never grants.
  if (method !== 'GET') headers['x-requested-with'] = 'pipeline-synthesis-app';
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(new URL(path, API_BASE), {
    method,
    headers,
    credentials: 'same-origin',
    cache: 'no-store',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  }).catch(() => {
    throw new ApiError(
      0,
      'NETWORK',
      'The request did not reach the server; check your connection and try again.',
    );
  });
}

async function readAnswer<T>(response: Response): Promise<T> {
  if (response.status === 204) return undefined as T;
  const body: unknown = await response.json().catch(() => undefined);
  if (response.ok) return body as T;
  const error = body as { error?: unknown; message?: unknown } | undefined;
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new ApiError(
    response.status,
    typeof error?.error === 'string' ? error.error : `HTTP_${response.status}`,
    typeof error?.message === 'string' ? error.message : `The server answered ${response.status}.`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

// ---- the session: when the cookie's access token expires, refreshed before it does ----------

/** Not a secret: only when the access token in the HttpOnly cookie expires, shared by the tabs. */
const SESSION_KEY = 'pipeline-synthesis.session';
const REFRESH_AHEAD_MS = 60_000;

interface SessionTimes {
  accessTokenExpiresAt: number;
  refreshedAt: number;
}

function storedTimes(): SessionTimes | undefined {
  try {
    const value = JSON.parse(localStorage.getItem(SESSION_KEY) ?? 'null') as SessionTimes | null;
    return value && Number.isFinite(value.accessTokenExpiresAt) ? value : undefined;
  } catch {
    return undefined;
  }
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
const signedOutListeners = new Set<() => void>();

/** Called when the session is gone (a refresh was refused, or another tab signed out). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

function signedOut(): void {
  clearTimeout(refreshTimer);
  localStorage.removeItem(SESSION_KEY);
  for (const listener of signedOutListeners) listener();
}

function scheduleRefresh(): void {
  clearTimeout(refreshTimer);
  const times = storedTimes();
  if (!times) return;
  const delay = Math.max(5_000, times.accessTokenExpiresAt - Date.now() - REFRESH_AHEAD_MS);
  refreshTimer = setTimeout(() => void refreshSession({ ahead: true }), delay);
}

/** Remembers a new session's expiry (from login, magic link or refresh) and plans its refresh. */
export function sessionStarted(answer: SessionSummary): void {
  const times: SessionTimes = {
    accessTokenExpiresAt: Date.parse(answer.session.accessTokenExpiresAt),
    refreshedAt: Date.now(),
  };
  localStorage.setItem(SESSION_KEY, JSON.stringify(times));
  scheduleRefresh();
}

/** Whether this browser has refreshed since `time` (in any tab). */
function refreshedSince(time: number): boolean {
  return (storedTimes()?.refreshedAt ?? 0) > time;
}

/** One refresh at a time across tabs: two tabs presenting one refresh token would end the session. */
function exclusively<T>(work: () => Promise<T>): Promise<T> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  return locks ? (locks.request('pipeline-synthesis-refresh', work) as Promise<T>) : work();
}

let refreshing: Promise<boolean> | undefined;

/**
 * Rotates the session through POST /auth/refresh (the refresh cookie goes only there). `teamId`
 * switches team. `ahead`: the planned refresh, skipped when another tab just did it. `since`: after
 * a 401 on a request made at that time, skipped when another tab refreshed in between.
 */
export function refreshSession(
  options: { teamId?: string; ahead?: boolean; since?: number } = {},
): Promise<boolean> {
  if (options.teamId === undefined && refreshing) return refreshing;
  const attempt = exclusively(async () => {
    if (options.teamId === undefined) {
      const times = storedTimes();
      if (options.ahead && times && times.accessTokenExpiresAt - Date.now() > REFRESH_AHEAD_MS + 5_000) {
        scheduleRefresh();
        return true;
      }
      if (options.since !== undefined && refreshedSince(options.since)) return true;
    }
    const response = await send('POST', 'auth/refresh', {
      body: options.teamId === undefined ? {} : { teamId: options.teamId },
    });
    if (!response.ok) {
      if (response.status === 401) signedOut();
      else if (options.teamId !== undefined) await readAnswer(response);
      return false;
    }
    sessionStarted(await readAnswer<SessionSummary>(response));
    return true;
  }).catch((error: unknown) => {
    if (options.teamId !== undefined) throw error;
    return false;
  });
  if (options.teamId === undefined) {
    refreshing = attempt;
    void attempt.finally(() => {
      refreshing = undefined;
    });
  }
  return attempt;
}

/** Whether this browser knows when its session expires (else the application refreshes once). */
export function knowsSessionExpiry(): boolean {
  return storedTimes() !== undefined;
}

/** Signs out: ends the session on the server, clears the cookies and tells every tab. */
export async function signOut(): Promise<void> {
  try {
    await readAnswer(await send('POST', 'auth/logout', { noRefresh: true }));
  } finally {
    signedOut();
  }
}

addEventListener('storage', (event) => {
  if (event.key !== SESSION_KEY) return;
  if (event.newValue === null) {
    for (const listener of signedOutListeners) listener();
  } else {
    scheduleRefresh();
  }
});

// ---- requests ---------------------------------------------------------------------------------

/** One API call; on a 401 the session is refreshed once and the call made again. */
export async function api<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
  const startedAt = Date.now();
  let response = await send(method, path, options);
  if (response.status === 401 && !options.noRefresh && (await refreshSession({ since: startedAt }))) {
    response = await send(method, path, options);
    if (response.status === 401) signedOut();
  }
  return readAnswer<T>(response);
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown, headers?: Record<string, string>) =>
  api<T>('POST', path, { body: body ?? {}, ...(headers ? { headers } : {}) });

/** A path segment from an id (ids are URL-safe, but nothing from the address bar is trusted). */
export const seg = (value: string) => encodeURIComponent(value);
