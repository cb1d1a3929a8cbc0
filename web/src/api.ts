/**
 * The application's only way to the API: the typed client (cli/client.ts) over same-origin fetch
 * with the HttpOnly session cookies (nothing secret is ever visible to this code),
 * `X-Requested-With` on every request that changes state, one refresh and one retry on a 401, and
 * `{error, message}` bodies turned into ApiError. Pages call `api(client.GET('/me'))`: the path,
 * its parameters and the answer are typed by the OpenAPI document.
 */
import {
  apiErrorFields,
  type ClientAnswer,
  createPipelineSynthesisClient,
  type SuccessBody,
  succeeded,
} from '../../cli/client.ts';
import type { SessionSummary } from './types.ts';

/** The API's base URL: the application lives at `<base>/app/`, so the API is one level up. */
export const API_BASE = new URL('../', document.baseURI);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
    /** The body's `details` (e.g. a rebase's `conflicts`), when it has them. */
    readonly details?: unknown,
  ) {
    super(message);
  }
}

function apiError(response: Response, body: unknown): ApiError {
  const { error, message, details } = apiErrorFields(body);
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ApiError(
    response.status,
    error ?? `HTTP_${response.status}`,
    message ?? `The server answered ${response.status}.`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    details,
  );
}

function send(request: Request): Promise<Response> {
  return fetch(request).catch(() => {
    throw new ApiError(
      0,
      'NETWORK',
      'The request did not reach the server; check your connection and try again.',
    );
  });
}

/** The auth calls answer a 401 themselves: for them it is the answer, not a reason to refresh. */
const AUTH_PATH = new URL('auth/', API_BASE).pathname;

/** One request; on a 401 the session is refreshed once and the request made again. */
async function sendRefreshingOnce(request: Request): Promise<Response> {
  const startedAt = Date.now();
  const again = request.clone();
  const response = await send(request);
  if (response.status !== 401 || new URL(request.url).pathname.startsWith(AUTH_PATH)) return response;
  if (!(await refreshSession({ since: startedAt }))) return response;
  const retried = await send(again);
  if (retried.status === 401) signedOut();
  return retried;
}

/** The typed client every page uses; read its answers through `api()`. */
export const client = createPipelineSynthesisClient({
  baseUrl: API_BASE.href,
  headers: { accept: 'application/json' },
  credentials: 'same-origin',
  cache: 'no-store',
  fetch: sendRefreshingOnce,
});

client.use({
  onRequest({ request }) {
    // A foreign page cannot add this header without a CORS preflight, which the API never grants.
    if (request.method !== 'GET') request.headers.set('x-requested-with', 'pipeline-synthesis-app');
    return request;
  },
});

/** A typed-client call's success body (undefined for a 204); an error status throws an ApiError. */
export async function api<Answer extends ClientAnswer>(call: Promise<Answer>): Promise<SuccessBody<Answer>> {
  const answer = await call;
  if (succeeded(answer)) return answer.data;
  throw apiError(answer.response, answer.error);
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
  let value: unknown;
  try {
    value = JSON.parse(localStorage.getItem(SESSION_KEY) ?? 'null');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const accessTokenExpiresAt: unknown = Reflect.get(value, 'accessTokenExpiresAt');
  const refreshedAt: unknown = Reflect.get(value, 'refreshedAt');
  if (typeof accessTokenExpiresAt !== 'number' || !Number.isFinite(accessTokenExpiresAt)) return undefined;
  return { accessTokenExpiresAt, refreshedAt: typeof refreshedAt === 'number' ? refreshedAt : 0 };
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
    const answer = await client.POST('/auth/refresh', {
      body: options.teamId === undefined ? {} : { teamId: options.teamId },
    });
    if (!succeeded(answer)) {
      if (answer.response.status === 401) signedOut();
      else if (options.teamId !== undefined) throw apiError(answer.response, answer.error);
      return false;
    }
    sessionStarted(answer.data);
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
    await api(client.POST('/auth/logout'));
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
