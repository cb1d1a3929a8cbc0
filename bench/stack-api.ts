/**
 * What the benches that drive the local stack share: limits that never throttle the bench's own
 * callers, a JSON caller with a team's API token, and a pipeline with a generated run to measure.
 */
import { DEFAULT_LIMITS } from '../lambdas/limits.ts';
import { DEMO_SLOTS } from '../local/seed.ts';

/** The stack's rate limits lifted: a bench measures the stack, not its throttle. */
export const UNLIMITED = {
  ...DEFAULT_LIMITS,
  requestsPerSecondPerCredential: 1_000_000,
  burstPerCredential: 1_000_000,
  servingRequestsPerSecondPerTeam: 1_000_000,
  servingBurstPerTeam: 1_000_000,
};

// biome-ignore lint/suspicious/noExplicitAny: benches read a few fields of the answers
export type StackApi = (method: string, route: string, body?: unknown) => Promise<any>;

/** Calls the API with `apiToken`; an answer of 400 or more throws with its body. */
export function stackApi(apiUrl: string, apiToken: string): StackApi {
  const headers = { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' };
  return async (method, route, body) => {
    const response = await fetch(`${apiUrl}${route}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

/** A new pipeline with four retrieval timeouts, and its run once generated (a proposal to approve). */
export async function pipelineWithGeneratedRun(api: StackApi, name: string) {
  const pipeline = await api('POST', '/pipelines', { name, slots: DEMO_SLOTS });
  await api('POST', `/pipelines/${pipeline.id}/signals`, {
    signals: Array.from({ length: 4 }, (_, i) => ({
      kind: 'timeout',
      severity: 'critical',
      message: `Retrieval timed out (${i})`,
      slotId: 'retrieve',
    })),
  });
  const started = await api('POST', `/pipelines/${pipeline.id}/synthesize`, {});
  for (;;) {
    const run = await api('GET', `/synthesis-runs/${started.id}`);
    if (run.status === 'generated') return { pipeline, run };
    if (run.status === 'failed') throw new Error(run.errorMessage);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
