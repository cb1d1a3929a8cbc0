/**
 * What a function's bundle leaves out (esbuild, bundled as lib/bundling.ts bundles every Lambda): a
 * zod schema a function does not use is neither in its bundle nor built at its cold start. A schema
 * whose arguments read a property or build a string from a value would be kept in every bundle that
 * imports its module, since esbuild cannot tell such a read from code with effects.
 */
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { esbuildOptions, operationEntryPath, REPO_ROOT } from '../../lib/bundling.ts';

async function bundleText(entryFile: string): Promise<string> {
  const result = await build({
    ...esbuildOptions(entryFile, 'out.mjs'),
    absWorkingDir: REPO_ROOT,
    write: false,
  });
  return result.outputFiles?.[0]?.text ?? '';
}

// Messages of schemas get-me has no use for: request bodies of other operations, stored records,
// the retention settings and the auth bodies.
const UNUSED = [
  'signal ids in a batch must be unique',
  'execution ids in a batch must be unique',
  'must serialize to at most',
  'must be a whole number of days from',
  'must be a 21-character nanoid',
];

it('leaves the schemas an operation does not use out of its bundle', async () => {
  const code = await bundleText(operationEntryPath('get-me'));

  expect(code).toContain('handler');
  for (const message of UNUSED) expect(code.includes(message), message).toBe(false);
}, 60_000);

it('keeps the schemas an operation uses in its bundle', async () => {
  const code = await bundleText(operationEntryPath('record-signals'));

  expect(code).toContain('signal ids in a batch must be unique');
}, 60_000);

it("leaves out a module none of whose exports an operation uses, whatever the module's top level builds", async () => {
  // approve-synthesis-run composes its stores from wiring/repositories.ts, which imports the trace
  // store and with it the OTLP span reader (a table of attribute names built at its top level):
  // without `sideEffects` in package.json, esbuild kept that table in every such bundle.
  const code = await bundleText(operationEntryPath('approve-synthesis-run'));

  expect(code).toContain('handler');
  expect(code.includes('gen_ai.operation.name')).toBe(false);
  // The one module imported for its effect (zod's messages in English) stays.
  expect(code.includes('Invalid input: expected'), "zod's English messages").toBe(true);
}, 60_000);

it('leaves the recording of records out of a function that only reads pipelines', async () => {
  // The evaluation set reads the pipeline, its configurations and its newest executions: given the
  // pipelines' reads alone (wiring/repositories.ts), its bundle holds none of what recording a
  // batch brings (claims, rollout counters, the series' updates and their late marks).
  const LATE_MARK = 'SET lateAt = :now, expiresAtEpoch = :e';
  const [reads, records] = await Promise.all([
    bundleText(operationEntryPath('get-synthesis-run-evaluation-set')),
    bundleText(operationEntryPath('record-executions')),
  ]);

  expect(records.includes(LATE_MARK), 'record-executions records').toBe(true);
  expect(reads).toContain('handler');
  expect(reads.includes(LATE_MARK), 'the evaluation set records nothing').toBe(false);
}, 60_000);
