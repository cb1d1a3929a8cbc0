/**
 * docs/conventions.md is the mapping: its tables are read here, a span of each convention (GenAI,
 * OpenLLMetry, OpenInference) is made from them with the OpenTelemetry SDK, sent through the
 * ingest's decoding as `application/protobuf`, and assembled; the execution and signals must hold
 * what the page says each attribute becomes. The tables must name exactly the attributes read.
 */
import { readFileSync } from 'node:fs';
import type { Attributes } from '@opentelemetry/api';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { type AssembleContext, assembleTrace, rootOf } from '../../../lambdas/core/otlp/assemble.ts';
import { executionIssue, spanIssue } from '../../../lambdas/core/otlp/check.ts';
import {
  READ_ATTRIBUTES,
  TOKEN_FIGURES,
  TOKENS_MAX,
  type TokenFigure,
  type TraceSpan,
} from '../../../lambdas/core/otlp/spans.ts';
import { bodyOf, decodeRequest, encodingOf } from '../../../lambdas/otlp/http.ts';
import { protobufBody, recordingTracer } from '../../support/otlp-requests.ts';
import { configuration } from '../core/otlp/trace-spans.ts';

interface Row {
  attribute: string;
  on: string;
  target: string;
}

const PAGE = readFileSync(new URL('../../../docs/conventions.md', import.meta.url), 'utf8');
const firstCode = (cell: string) => /`([^`]+)`/.exec(cell)?.[1] ?? '';

/** The page's attribute tables, by the heading of their section. */
function tables(): Map<string, Row[]> {
  const sections = new Map<string, Row[]>();
  let heading = '';
  for (const token of Lexer.lex(PAGE)) {
    if (token.type === 'heading') heading = (token as Tokens.Heading).text;
    if (token.type !== 'table') continue;
    const table = token as Tokens.Table;
    if (table.header[0]?.text !== 'attribute') continue;
    const rows = table.rows.map(([attribute, on, target]) => ({
      attribute: firstCode(attribute?.text ?? ''),
      on: on?.text ?? '',
      target: firstCode(target?.text ?? ''),
    }));
    sections.set(heading, [...(sections.get(heading) ?? []), ...rows]);
  }
  return sections;
}

const TABLES = tables();
const CONVENTIONS = ['OpenTelemetry GenAI semantic conventions', 'OpenLLMetry (Traceloop)', 'OpenInference'];
const FIGURES = Object.keys(TOKEN_FIGURES) as TokenFigure[];

const MODEL = 'claude-under-test';
const INPUT = { question: 'what is our refund policy?' };
const TOKENS: Record<TokenFigure, number> = {
  inputTokens: 1200,
  outputTokens: 80,
  cacheReadInputTokens: 900,
  cacheWriteInputTokens: 250,
};
const EVALUATION = { kind: 'relevance', value: 0.25, label: 'fail', explanation: 'cites the wrong policy' };

/** The value a row's attribute is given in the test span. */
function testValue(row: Row): string | number {
  if (row.target === 'model call') return row.attribute === 'openinference.span.kind' ? 'LLM' : 'chat';
  if (row.target === 'model') return MODEL;
  if (row.target === 'input') return JSON.stringify(INPUT);
  if (row.target in TOKENS) return TOKENS[row.target as TokenFigure];
  const evaluation: Record<string, string | number> = {
    'evaluation.kind': 'Relevance',
    'evaluation.value': EVALUATION.value,
    'evaluation.severity': EVALUATION.label,
    'evaluation.message': EVALUATION.explanation,
  };
  const value = evaluation[row.target];
  if (value === undefined) throw new Error(`no test value for the target ${row.target}`);
  return value;
}

const onEvaluation = (row: Row) => row.on.includes('gen_ai.evaluation.result');
const T0 = Date.now() - 60_000;

/** The request decoded from one SDK span carrying these rows, sent as `application/protobuf`. */
function request(rows: Row[], values: (row: Row) => string | number = testValue) {
  const tracer = recordingTracer();
  const attributes: Attributes = {};
  const evaluation: Attributes = {};
  for (const row of rows) (onEvaluation(row) ? evaluation : attributes)[row.attribute] = values(row);
  const span = tracer.open({
    name: 'chat',
    start: T0,
    end: T0 + 700,
    attributes,
    ...(Object.keys(evaluation).length > 0
      ? { events: [{ name: 'gen_ai.evaluation.result', attributes: evaluation }] }
      : {}),
  });
  tracer.close(span, { end: T0 + 700 });
  const event = {
    headers: { 'Content-Type': 'application/protobuf' },
    body: protobufBody(tracer.spans()).toString('base64'),
    isBase64Encoded: true,
  } as unknown as Parameters<typeof bodyOf>[0];
  return decodeRequest(bodyOf(event), encodingOf(event));
}
const sent = (rows: Row[], values?: (row: Row) => string | number): TraceSpan[] =>
  request(rows, values).spans;

const CONFIGURATION = configuration([
  { id: 'retrieve', model: 'some-embedding-model' },
  { id: 'answer', model: MODEL },
]);

function assembled(spans: TraceSpan[]) {
  const root = rootOf(spans);
  if (!root) throw new Error('the span sent is no root');
  const context: AssembleContext = {
    traceId: root.traceId,
    pipelineId: 'pipe-1',
    configuration: CONFIGURATION,
    redact: (text) => text,
  };
  return assembleTrace(spans, root, context);
}

/** The rows of a convention, the first of each target: what a span of it carries. */
function firstOfEach(rows: Row[]): Map<string, Row> {
  const first = new Map<string, Row>();
  for (const row of rows) if (!first.has(row.target)) first.set(row.target, row);
  return first;
}

/** What the page says a span of these rows gives, checked against what it gives. */
function expectMapped(rows: Row[]) {
  const { execution, signals } = assembled(sent(rows));
  const targets = new Set(rows.map((row) => row.target));
  const [slot] = execution.slotResults ?? [];
  expect(execution.slotResults).toHaveLength(1);
  expect(slot).toMatchObject({ slotId: 'answer', status: 'succeeded', durationMs: 700 });
  for (const figure of FIGURES) {
    expect(slot?.[figure], figure).toBe(targets.has(figure) ? TOKENS[figure] : undefined);
  }
  if (targets.has('input')) expect(execution.input).toEqual(INPUT);
  const evaluations = signals.filter((signal) => signal.kind !== 'error');
  if (rows.some(onEvaluation)) {
    expect(evaluations).toEqual([
      expect.objectContaining({
        kind: EVALUATION.kind,
        value: EVALUATION.value,
        severity: 'warning',
        slotId: 'answer',
        executionId: execution.id,
        message: `${EVALUATION.kind} ${EVALUATION.label} score ${EVALUATION.value}: ${EVALUATION.explanation}`,
      }),
    ]);
  } else {
    expect(evaluations).toEqual([]);
  }
}

describe('docs/conventions.md', () => {
  it('names exactly the attributes the mapping reads, each token count as the figure the code sums it into', () => {
    const named = [...TABLES.values()].flat();
    expect(new Set(named.map((row) => row.attribute))).toEqual(new Set(READ_ATTRIBUTES));
    for (const figure of FIGURES) {
      for (const attribute of TOKEN_FIGURES[figure]) {
        const targets = new Set(named.filter((row) => row.attribute === attribute).map((row) => row.target));
        expect([...targets], attribute).toEqual([figure]);
      }
    }
  });

  it('has a table for each convention, each with a model call, a model and all four token figures', () => {
    for (const convention of CONVENTIONS) {
      const targets = new Set(TABLES.get(convention)?.map((row) => row.target));
      expect([...targets], convention).toEqual(expect.arrayContaining(['model call', 'model', ...FIGURES]));
    }
  });

  for (const convention of CONVENTIONS) {
    describe(convention, () => {
      const rows = TABLES.get(convention) ?? [];
      const first = firstOfEach(rows);

      it('a span with its attributes gives the slot, tokens, cache tokens, input and evaluation the page lists', () => {
        expectMapped([...first.values()]);
      });

      it('each other name of a target is read in place of the first', () => {
        const others = rows.filter((row) => first.get(row.target) !== row);
        for (const other of others)
          expectMapped([...first.values()].map((row) => (row.target === other.target ? other : row)));
      });

      it('refuses a token count past the bound, naming it, and a slot whose sum passes it', () => {
        for (const row of rows.filter((candidate) => candidate.target in TOKENS)) {
          for (const tokens of [TOKENS_MAX + 1, -1]) {
            const refused = request([row], () => tokens);
            expect(refused.spans, row.attribute).toEqual([]);
            expect(refused.rejected).toBe(1);
            expect([...refused.reasons].join(), row.attribute).toContain(row.attribute);
          }
        }
        const model = [...first.values()].filter(
          (row) => row.target === 'model call' || row.target === 'model',
        );
        const halves = FIGURES.map((figure) => {
          const row = first.get(figure);
          if (!row) throw new Error(`${convention} names no ${figure}`);
          return row;
        });
        // Each span within the bound, their sum past it: the execution is refused with the reason.
        const spans = [
          ...sent([...model, ...halves], (row) => (row.target in TOKENS ? 600_000_000 : testValue(row))),
        ];
        expect(spans.map(spanIssue)).toEqual([undefined]);
        const child = {
          ...spans[0],
          spanId: 'ffffffffffffffff',
          parentSpanId: spans[0]?.spanId,
        } as TraceSpan;
        const { execution } = assembled([...spans, child]);
        expect(executionIssue(execution)).toMatch(/slotResults\.0\.\w+Tokens/);
      });
    });
  }
});
