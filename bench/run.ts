/**
 * `npm run bench`: every target of the project, measured here, as ratios against a baseline run in
 * the same script. Never part of `npm test`.
 */
import { writeOpenApiDocumentModule } from '../lambdas/operations/openapi-build.ts';
import { writeAppAssetsModule } from '../web/build.ts';
import { formatAppSize, measureAppSize } from './app-size.ts';
import { formatBundleTable, measureBundles } from './bundle-size.ts';
import { measureCli } from './cli.ts';
import { formatDiagnosisTable, measureDiagnosis } from './diagnosis.ts';
import { formatEvaluation, measureEvaluation } from './evaluation.ts';
import { formatGuardrail, measureGuardrail } from './guardrail.ts';
import { formatLifecycle, measureLifecycle } from './lifecycle.ts';
import { formatLoadTable } from './load.ts';
import { formatCpuBreakdown, measureLocalStack } from './local-stack.ts';
import { formatRollouts, measureRollouts } from './rollouts.ts';
import { formatScheduling, measureScheduling } from './scheduling.ts';
import { formatPhaseMedians, measureStartTime } from './start-time.ts';
import { formatWebhooks, measureWebhooks } from './webhooks.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
// As `npm start` (local/start.ts): Lambda's time zone, so the local stack's functions run as worker threads.
process.env.TZ = 'UTC';

const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);
const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');

if (wanted('app')) {
  console.log('== Review application (web/, target: JavaScript ≤ 60 KB gzipped)');
  console.log(formatAppSize(await measureAppSize()));
}

if (wanted('bundles')) {
  // The serve-app bundle embeds the built application, as cdk synth builds it.
  await Promise.all([writeAppAssetsModule(), writeOpenApiDocumentModule()]);
  console.log(
    "== Lambda bundles (target: HTTP ≤ 400 KB, the worker's every-job part ≤ 600 KB, init ≤ 1.5 × baseline: the import's CPU time, wall time beside it)",
  );
  console.log(formatBundleTable(await measureBundles()));
}

if (wanted('local')) {
  const figures = await measureLocalStack();
  const f = (n: number) => n.toFixed(2);
  console.log('\n== Local stack');
  console.log(
    `poll p50 ${f(figures.pollP50Ms)} ms vs GetItem p50 ${f(figures.getItemP50Ms)} ms: ${f(figures.pollLatencyRatio)}× (target ≤ 2×) ${verdict(figures.pollLatencyRatio <= 2)}`,
  );
  console.log(
    `poll ${figures.pollPerSecond.toFixed(0)}/s vs GetItem ${figures.getItemPerSecond.toFixed(0)}/s at 16 callers (polls: node:http, keep-alive; GetItem: the SDK): ${f(figures.pollThroughputRatio)}× (target ≥ 0.6×) ${verdict(figures.pollThroughputRatio >= 0.6)}`,
  );
  console.log(
    `floor (the same handler bundle called in one plain HTTP server's process: no gateway, no authorizer, no environment) ${figures.floor.perSecond.toFixed(0)}/s vs GetItem ${figures.floor.getItemPerSecond.toFixed(0)}/s: ${f(figures.floor.ratio)}× — no local stack can pass this`,
  );
  if (figures.cpu) console.log(formatCpuBreakdown(figures.cpu));
  console.log(
    `POST synthesize → generated (heuristic-v1) median ${figures.generateMedianMs.toFixed(0)} ms (target ≤ 1000 ms) ${verdict(figures.generateMedianMs <= 1000)}`,
  );
  console.log(formatLoadTable(figures.load));
}

if (wanted('scheduling')) {
  console.log("\n== Scheduling (fair queues by message group: one team's burst against another team's run)");
  console.log(formatScheduling(await measureScheduling()));
}

if (wanted('start')) {
  const start = await measureStartTime();
  console.log('\n== npm start');
  console.log(
    `ready in ${start.medianMs.toFixed(0)} ms median of ${start.allMs.map((ms) => ms.toFixed(0)).join(', ')} (target ≤ 4000 ms, bundles cached) ${verdict(start.medianMs <= 4000)}`,
  );
  console.log(formatPhaseMedians(start.phases));
  console.log(
    `without the bundle cache, as on a fresh clone: ready in ${start.fresh.readyMs.toFixed(0)} ms (target ≤ 10000 ms) ${verdict(start.fresh.readyMs <= 10_000)}`,
  );
  console.log(formatPhaseMedians([start.fresh.phases]));
}

if (wanted('cli')) {
  const cli = await measureCli();
  console.log('\n== CLI (node dist/pipeline-synthesis.cjs, a fresh process each time)');
  console.log(
    `--help median ${cli.helpMedianMs.toFixed(0)} ms (target ≤ 200 ms) ${verdict(cli.helpMedianMs <= 200)}; node -e 0 alone ${cli.nodeMedianMs.toFixed(0)} ms; me against the local stack median ${cli.meMedianMs.toFixed(0)} ms`,
  );
}

if (wanted('diagnosis')) {
  console.log('\n== Diagnosis (heuristic-v1 on pipelines with injected faults)');
  console.log(formatDiagnosisTable(measureDiagnosis()));
}

if (wanted('evaluation')) {
  console.log(
    '\n== Checking a proposal (evaluate with a runner that answers at once; reading an evaluated run)',
  );
  console.log(formatEvaluation(await measureEvaluation()));
}

if (wanted('lifecycle')) {
  console.log('\n== Data lifecycle (deleting a pipeline, exporting one; DynamoDB Local)');
  console.log(formatLifecycle(await measureLifecycle()));
}

if (wanted('rollouts')) {
  console.log('\n== Rollouts (serving, recording during a rollout, effect; ratios against a poll)');
  console.log(formatRollouts(await measureRollouts()));
  console.log(formatGuardrail(await measureGuardrail()));
}

if (wanted('webhooks')) {
  console.log('\n== Events and webhooks (local stack: stream → deliverers → a receiver on 127.0.0.1)');
  console.log(formatWebhooks(await measureWebhooks()));
}
