/**
 * OTLP ingest on the local stack: 1,000 traces of 10 spans sent as the SDK's batch processor sends
 * them (protobuf, 512 spans a request) against the same 1,000 executions and their signals through
 * POST …/executions and POST …/signals in batches of 100, the two sides taking turns; the ingesting
 * function's heap over the run; a 5 MB batch; the bytes per span the official serializer writes.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DEMO_SLOTS } from '../local/seed.ts';
import { startLocalStack } from '../local/stack.ts';
import { protobufBody, recordingTracer, run } from '../test/support/otlp-requests.ts';
import { stackApi, UNLIMITED } from './stack-api.ts';

const TRACES = 1_000;
const BATCH_SPANS = 512;

export interface OtlpFigures {
  otlpPerSecond: number;
  jsonPerSecond: number;
  ratio: number;
  heapMb: number[];
  bytesPerSpan: number;
  bigBatch: { bytes: number; status: number };
  /** Another team's one-trace requests: median latency alone and while the review's bombs are sent. */
  underBombs: { quietMs: number; bombedMs: number; ratio: number; bombs: number; answers: number[] };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * The second team's latency, one trace a request (protobuf), 30 requests alone, then 30 while the
 * first team sends the review's bombs in a loop (from a worker thread, bench/otlp-attacker.ts): the
 * bombs must not make it more than 2 × slower.
 */
async function measureUnderBombs(stack: Awaited<ReturnType<typeof startLocalStack>>) {
  const [attacker, other] = stack.teams;
  if (!attacker || !other) throw new Error('the bench needs the two seeded teams');
  const otherApi = stackApi(stack.apiUrl, other.apiToken);
  const pipeline = await otherApi('GET', `/pipelines/${other.pipelineIds[0]}`);
  const post = async (
    token: string,
    pipelineId: string,
    body: Uint8Array,
    headers: Record<string, string>,
  ) => {
    const started = performance.now();
    const response = await fetch(`${stack.apiUrl}/pipelines/${pipelineId}/otlp/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...headers },
      body,
    });
    await response.arrayBuffer();
    return { ms: performance.now() - started, status: response.status };
  };
  const oneTrace = async (round: number) => {
    const tracer = recordingTracer();
    run(tracer, pipeline.id, pipeline.activeConfigurationId, Date.now() - 60_000 - round);
    const body = protobufBody(tracer.spans());
    return post(other.apiToken, pipeline.id, body, { 'content-type': 'application/x-protobuf' });
  };
  const series = async (from: number) => {
    const times: number[] = [];
    for (let round = from; round < from + 30; round++) times.push((await oneTrace(round)).ms);
    return times;
  };
  await series(1_000); // warm
  const quiet = await series(0);
  const bomber = new Worker(new URL('./otlp-attacker.ts', import.meta.url), {
    workerData: {
      url: `${stack.apiUrl}/pipelines/${attacker.pipelineIds[0] ?? ''}/otlp/v1/traces`,
      token: attacker.apiToken,
    },
  });
  const ended = new Promise<number[]>((resolve, reject) => {
    bomber.on('message', (message: { answers?: number[] }) => {
      if (message.answers) resolve(message.answers);
    });
    bomber.on('error', reject);
  });
  await new Promise<void>((resolve) => bomber.once('message', () => resolve()));
  const bombed = await series(100);
  bomber.postMessage('stop');
  const answers = await ended;
  await bomber.terminate();
  const quietMs = median(quiet);
  const bombedMs = median(bombed);
  return {
    quietMs,
    bombedMs,
    ratio: bombedMs / quietMs,
    bombs: answers.length,
    answers: [...new Set(answers)],
  };
}

/** 1,000 traces of a root and 9 children (retrieval, model calls with tokens), an evaluation event each. */
function traces(pipelineId: string, configurationId: string, count = TRACES, padding = ''): ReadableSpan[] {
  const tracer = recordingTracer();
  const start = Date.now() - 3_600_000;
  for (let trace = 0; trace < count; trace++) {
    const at = start + trace * 1_000;
    const root = tracer.open({
      name: 'answer-question',
      start: at,
      end: at + 900,
      attributes: { 'input.value': JSON.stringify({ question: `question ${trace}` }) },
      events: [
        {
          name: 'feature_flag.evaluation',
          attributes: { 'feature_flag.key': pipelineId, 'feature_flag.result.variant': configurationId },
        },
        {
          name: 'gen_ai.evaluation.result',
          attributes: { 'gen_ai.evaluation.name': 'relevance', 'gen_ai.evaluation.score.value': 0.8 },
        },
      ],
    });
    for (let child = 0; child < 9; child++) {
      const model = child % 3 === 2;
      const span = tracer.open({
        name: model ? 'chat claude-sonnet-4-5' : 'retrieve',
        parent: root,
        start: at + child * 90,
        end: at + child * 90 + 80,
        attributes: model
          ? {
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': 'claude-sonnet-4-5',
              'gen_ai.usage.input_tokens': 300,
              'gen_ai.usage.output_tokens': 60,
            }
          : { 'db.system': 'vector', 'db.query.text': `nearest neighbours of the question${padding}` },
      });
      tracer.close(span, { end: at + child * 90 + 80 });
    }
    tracer.close(root, { end: at + 900 });
  }
  return tracer.spans();
}

/** The same runs as the JSON endpoints take them. */
function records(configurationId: string) {
  const start = Date.now() - 3_600_000;
  const executions = Array.from({ length: TRACES }, (_, trace) => ({
    id: `json-${trace}`,
    configurationId,
    status: 'succeeded',
    durationMs: 900,
    startedAt: new Date(start + trace * 1_000).toISOString(),
    input: { question: `question ${trace}` },
    slotResults: [
      { slotId: 'retrieve', status: 'succeeded', durationMs: 800 },
      { slotId: 'answer-model', status: 'succeeded', durationMs: 620, inputTokens: 900, outputTokens: 180 },
    ],
  }));
  const signals = executions.map((execution, trace) => ({
    kind: 'relevance',
    severity: 'info',
    message: 'relevance score 0.8',
    value: 0.8,
    executionId: execution.id,
    occurredAt: new Date(start + trace * 1_000 + 900).toISOString(),
  }));
  return { executions, signals };
}

export async function measureOtlp(): Promise<OtlpFigures> {
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), 'bench-otlp-')),
    limits: UNLIMITED,
    log: () => {},
  });
  try {
    const token = stack.teams[0]?.apiToken ?? '';
    const api = stackApi(stack.apiUrl, token);
    const [viaJson, viaOtlp, big] = await Promise.all(
      ['json', 'otlp', 'big'].map((name) =>
        api('POST', '/pipelines', { name: `bench ${name}`, slots: DEMO_SLOTS }),
      ),
    );
    const send = async (pipelineId: string, body: Uint8Array) => {
      const response = await fetch(`${stack.apiUrl}/pipelines/${pipelineId}/otlp/v1/traces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-protobuf' },
        body,
      });
      await response.arrayBuffer();
      return response.status;
    };
    const spans = traces(viaOtlp.id, viaOtlp.activeConfigurationId);
    const batches: Uint8Array[] = [];
    for (let at = 0; at < spans.length; at += BATCH_SPANS) {
      batches.push(
        ProtobufTraceSerializer.serializeRequest(spans.slice(at, at + BATCH_SPANS)) ?? new Uint8Array(),
      );
    }
    const bytesPerSpan = batches.reduce((sum, batch) => sum + batch.length, 0) / spans.length;

    // Each side's functions warm first (one request each, on the third pipeline), so neither side's
    // time holds a cold start the other's does not.
    const warm = traces(big.id, big.activeConfigurationId, 1);
    await send(big.id, ProtobufTraceSerializer.serializeRequest(warm) ?? new Uint8Array());
    const warmRecords = records(big.activeConfigurationId);
    await api('POST', `/pipelines/${big.id}/executions`, { executions: warmRecords.executions.slice(0, 1) });
    await api('POST', `/pipelines/${big.id}/signals`, { signals: warmRecords.signals.slice(0, 1) });

    const { executions, signals } = records(viaJson.activeConfigurationId);
    const ingesting = stack.functions.get('ingest-otlp-traces');
    const heapMb: number[] = [];
    // The two sides take turns, about 100 traces of each a round (two OTLP requests of 512 spans, one
    // batch of executions and one of signals), the side that goes first alternating: on a machine
    // shared with other work, a change of load while one side runs no longer counts against it.
    // Only the requests are timed, not the heap samples between them.
    let jsonMs = 0;
    let otlpMs = 0;
    const jsonRound = async (at: number) => {
      const started = performance.now();
      await api('POST', `/pipelines/${viaJson.id}/executions`, {
        executions: executions.slice(at, at + 100),
      });
      await api('POST', `/pipelines/${viaJson.id}/signals`, { signals: signals.slice(at, at + 100) });
      jsonMs += performance.now() - started;
    };
    const otlpRound = async (round: number) => {
      const perRound = Math.ceil(batches.length / (TRACES / 100));
      for (const batch of batches.slice(round * perRound, (round + 1) * perRound)) {
        const started = performance.now();
        const status = await send(viaOtlp.id, batch);
        otlpMs += performance.now() - started;
        if (status !== 200) throw new Error(`the OTLP batch was answered ${status}`);
        const heaps = (await ingesting?.environmentHeapBytes()) ?? [];
        heapMb.push(Math.max(0, ...heaps) / 1024 / 1024);
      }
    };
    for (let round = 0; round < TRACES / 100; round++) {
      if (round % 2 === 0) {
        await jsonRound(round * 100);
        await otlpRound(round);
      } else {
        await otlpRound(round);
        await jsonRound(round * 100);
      }
    }
    const stored = await api('GET', `/pipelines/${viaOtlp.id}/executions?limit=1`);
    if (stored.items.length !== 1) throw new Error('the OTLP traces recorded no execution');

    // A 5 MB batch within the 10,000 spans a request reads: GenAI-sized spans (a prompt-sized text each).
    const bigBody =
      ProtobufTraceSerializer.serializeRequest(
        traces(big.id, big.activeConfigurationId, 1_000, ' '.repeat(560)),
      ) ?? new Uint8Array();
    const bigStatus = await send(big.id, bigBody);
    const underBombs = await measureUnderBombs(stack);

    const otlpPerSecond = TRACES / (otlpMs / 1000);
    const jsonPerSecond = TRACES / (jsonMs / 1000);
    return {
      otlpPerSecond,
      jsonPerSecond,
      ratio: otlpPerSecond / jsonPerSecond,
      heapMb,
      bytesPerSpan,
      bigBatch: { bytes: bigBody.length, status: bigStatus },
      underBombs,
    };
  } finally {
    await stack.stop();
  }
}

export function formatOtlp(figures: OtlpFigures, verdict: (ok: boolean) => string): string {
  const heap = figures.heapMb.map((mb) => mb.toFixed(0)).join(', ');
  return [
    `otlp ingest: ${figures.otlpPerSecond.toFixed(0)} traces/s (10 spans each, protobuf, 512 spans a request) vs JSON ${figures.jsonPerSecond.toFixed(0)} executions+signals/s (batches of 100): ${figures.ratio.toFixed(2)}× (target ≥ 0.8×) ${verdict(figures.ratio >= 0.8)}`,
    `otlp ingesting function's heap after each request: ${heap} MB (flat: each request's spans are let go)`,
    `otlp bytes per span as the official serializer writes them: ${figures.bytesPerSpan.toFixed(0)}; a ${(figures.bigBatch.bytes / 1024 / 1024).toFixed(1)} MB batch answered ${figures.bigBatch.status} ${verdict(figures.bigBatch.status === 200)}`,
    `otlp another team's one-trace request, median: ${figures.underBombs.quietMs.toFixed(1)} ms alone, ${figures.underBombs.bombedMs.toFixed(1)} ms while ${figures.underBombs.bombs} of the review's bombs were sent (answered ${figures.underBombs.answers.join(', ')}): ${figures.underBombs.ratio.toFixed(2)}× (target ≤ 2×) ${verdict(figures.underBombs.ratio <= 2 && figures.underBombs.answers.every((status) => status < 500))}`,
  ].join('\n');
}
