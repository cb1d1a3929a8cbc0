import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { buildOpenApiDocument } from '../../../lambdas/operations/openapi.ts';

/**
 * Runs the real Redocly CLI on the document GET /openapi.json serves, with redocly.yaml: the
 * recommended rules plus examples for every request body and every error response.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);
const directories: string[] = [];

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{
    ruleId: string;
    severity: string;
    message: string;
    location: Array<{ pointer: string }>;
  }>;
}

async function lint(document: unknown): Promise<LintReport> {
  const directory = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-openapi-'));
  directories.push(directory);
  const file = path.join(directory, 'openapi.json');
  await writeFile(file, JSON.stringify(document, null, 2));
  const cli = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
  const args = [cli, 'lint', '--config', path.join(ROOT, 'redocly.yaml'), '--format=json', file];
  // Telemetry and the update check are off: a test talks to nothing but 127.0.0.1.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const output = await run(process.execPath, args, { cwd: ROOT, env }).catch(
    (error: { stdout?: string }) => error,
  );
  return JSON.parse(String(output.stdout)) as LintReport;
}

afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe('the OpenAPI document under Redocly lint', () => {
  it('has no error and no warning', async () => {
    const report = await lint(buildOpenApiDocument(OPERATIONS));
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('would flag a request body or an error without an example, and an example the schema refuses', async () => {
    const document = structuredClone(buildOpenApiDocument(OPERATIONS)) as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, { example?: unknown }> } }>
      >;
      components: { responses: Record<string, { content: Record<string, { example?: unknown }> }> };
    };
    const createPipeline = document.paths['/pipelines']?.post?.requestBody.content['application/json'];
    delete createPipeline?.example;
    delete document.components.responses.NotFound?.content['application/json']?.example;
    const login = document.paths['/auth/login']?.post?.requestBody.content['application/json'];
    if (login) login.example = { email: 'ada@example.com', password: 'x', delivery: 'pigeon' };

    const report = await lint(document);

    expect(report.problems.map((problem) => problem.ruleId).sort()).toEqual([
      'no-invalid-media-type-examples',
      'rule/error-response-example',
      'rule/request-body-example',
    ]);
  });
});
