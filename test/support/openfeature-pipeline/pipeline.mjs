/*
 * A team's pipeline as it would read its configuration through OpenFeature: only published
 * packages (the OpenFeature server SDK, its OFREP provider and OpenTelemetry hook, the OpenTelemetry
 * SDK and its OTLP exporter), nothing of this repository. Run as a child process by the tests.
 *
 *   node pipeline.mjs evaluate <key>...   prints one JSON line per targeting key: what it was served
 *   node pipeline.mjs run <count>         handles <count> requests, each in a trace exported over OTLP
 *
 * Environment: API_URL, API_TOKEN, PIPELINE_ID; for `run`, WORSE_CONFIGURATION_ID (the configuration
 * under which every other request fails, as a worse prompt would), and the exporter's own standard
 * settings OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS, as the README sets them.
 */

import { OFREPProvider } from '@openfeature/ofrep-provider';
import { SpanEventHook } from '@openfeature/open-telemetry-hooks';
import { OpenFeature } from '@openfeature/server-sdk';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const { API_URL, API_TOKEN, PIPELINE_ID, WORSE_CONFIGURATION_ID } = process.env;
const authorization = `Bearer ${API_TOKEN}`;
/** What the pipeline runs when the API cannot be reached: the configuration the team last shipped. */
const LAST_SHIPPED = { configurationId: 'last-shipped', version: 0, slots: [] };

await OpenFeature.setProviderAndWait(
  new OFREPProvider({ baseUrl: API_URL, headers: [['Authorization', authorization]] }),
);
const client = OpenFeature.getClient();

async function evaluate(keys) {
  for (const targetingKey of keys) {
    const details = await client.getObjectDetails(PIPELINE_ID, LAST_SHIPPED, { targetingKey });
    const { value, variant, reason, errorCode, flagMetadata } = details;
    console.log(
      JSON.stringify({
        targetingKey,
        configurationId: value.configurationId,
        variant,
        reason,
        errorCode,
        flagMetadata,
      }),
    );
  }
}

async function run(count) {
  // Configured only by OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS.
  const exporter = new OTLPTraceExporter();
  // As a pipeline exports: in batches (here of 50 traces, so 200 requests make 4 exports).
  const processor = new BatchSpanProcessor(exporter, { maxExportBatchSize: 50, maxQueueSize: 1_000 });
  const provider = new NodeTracerProvider({ spanProcessors: [processor] });
  provider.register();
  // The configuration itself stays off the trace: its id (the variant) says which one ran.
  OpenFeature.addHooks(new SpanEventHook({ excludeAttributes: ['feature_flag.result.value'] }));
  const tracer = trace.getTracer('support-bot');
  const served = {};
  const failed = {};
  for (let i = 0; i < count; i++) {
    await tracer.startActiveSpan('handle question', async (span) => {
      const configuration = await client.getObjectValue(PIPELINE_ID, LAST_SHIPPED, {
        targetingKey: `conversation-${i}`,
      });
      served[configuration.configurationId] = (served[configuration.configurationId] ?? 0) + 1;
      if (configuration.configurationId === WORSE_CONFIGURATION_ID && i % 2 === 0) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the answer was refused' });
        failed[configuration.configurationId] = (failed[configuration.configurationId] ?? 0) + 1;
      }
      span.end();
    });
  }
  await provider.forceFlush();
  await provider.shutdown();
  console.log(JSON.stringify({ served, failed }));
}

const [command, ...args] = process.argv.slice(2);
if (command === 'evaluate') await evaluate(args);
else if (command === 'run') await run(Number(args[0]));
else throw new Error(`unknown command ${command}`);
await OpenFeature.close();
