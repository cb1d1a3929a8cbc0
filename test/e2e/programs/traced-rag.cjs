/*
 * A small RAG pipeline instrumented only with the OpenTelemetry SDK, an official OTLP exporter and
 * OpenLLMetry's Anthropic instrumentation: no code of this repository. It answers QUESTIONS (JSON
 * array) through the Messages API at ANTHROPIC_BASE_URL and exports its traces where the standard
 * OTEL_EXPORTER_OTLP_* variables say. Which configuration it ran is written as OpenTelemetry's
 * feature_flag.evaluation event; each answer is judged by a gen_ai.evaluation.result event.
 */
const { trace, SpanStatusCode } = require('@opentelemetry/api');
const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');
const anthropic = require('anthropic-sdk-0-80');

const exporterPackage =
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json'
    ? '@opentelemetry/exporter-trace-otlp-http'
    : '@opentelemetry/exporter-trace-otlp-proto';
const { OTLPTraceExporter } = require(exporterPackage);

const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new AnthropicInstrumentation({ traceContent: true }).manuallyInstrument(anthropic);

const client = new anthropic.Anthropic({ maxRetries: 0 });
const tracer = trace.getTracer('traced-rag');
const pipelineId = process.env.PIPELINE_ID;
const variant = process.env.CONFIGURATION_ID;

async function answer(question) {
  return tracer.startActiveSpan('answer-question', async (root) => {
    root.setAttribute('input.value', JSON.stringify({ question }));
    root.addEvent('feature_flag.evaluation', {
      'feature_flag.key': pipelineId,
      'feature_flag.result.variant': variant,
    });
    try {
      const documents = await tracer.startActiveSpan('retrieve', async (span) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        span.end();
        return ['Refunds are accepted within 30 days.'];
      });
      const reply = await client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content: `${documents.join('\n')}\n\n${question}` }],
      });
      const text = reply.content.map((block) => block.text ?? '').join('');
      const relevant = text.includes('30 days');
      root.addEvent('gen_ai.evaluation.result', {
        'gen_ai.evaluation.name': 'Relevance',
        'gen_ai.evaluation.score.value': relevant ? 0.9 : 0.1,
        'gen_ai.evaluation.score.label': relevant ? 'relevant' : 'irrelevant',
        'gen_ai.evaluation.explanation': relevant ? 'cites the policy' : 'does not cite the policy',
      });
      return text;
    } catch (error) {
      root.recordException(error);
      root.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      return undefined;
    } finally {
      root.end();
    }
  });
}

async function main() {
  for (const question of JSON.parse(process.env.QUESTIONS ?? '[]')) {
    const text = await answer(question);
    process.stdout.write(`${JSON.stringify({ question, answered: text !== undefined })}\n`);
  }
  await provider.shutdown();
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
