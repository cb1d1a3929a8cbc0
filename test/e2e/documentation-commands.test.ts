import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_BIN } from '../../cli/build.ts';
import { createPipelineSynthesisClient } from '../../cli/client.ts';
import { REPO_ROOT } from '../../lib/bundling.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { documentsOf, type ShellBlock, scriptOf, shellBlocks, unrunnable } from '../support/doc-commands.ts';

/**
 * Documentation that cannot drift: every shell block of README.md and docs/ that uses the CLI or
 * curl runs, in reading order, in one bash against one local stack (from a copy of examples/, as a
 * reader at the repository's root), and must do what its text says; the others are marked.
 */
let stack: LocalStack;
let workDir: string;
const blocks: ShellBlock[] = documentsOf(REPO_ROOT).flatMap((document) => shellBlocks(REPO_ROOT, document));

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-docs-'));
  await cp(path.join(REPO_ROOT, 'examples'), path.join(workDir, 'examples'), { recursive: true });
  // The walk-through runs heuristic-v1, as `npm start` does without an Anthropic key.
  delete process.env.ANTHROPIC_API_KEY;
  await buildCli();
  stack = await startLocalStack({
    port: 0,
    stateDir: path.join(workDir, '.local'),
    quiet: true,
    log: () => {},
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(workDir, { recursive: true, force: true });
}, 60_000);

function bash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  for (const name of ['PIPELINE_SYNTHESIS_API_URL', 'PIPELINE_SYNTHESIS_API_TOKEN', 'LOCAL_STATE_DIR'])
    delete env[name];
  const child = spawn('bash', ['-c', script], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const result = { code: null as number | null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      result.code = code;
      resolve(result);
    }),
  );
}

describe('the documented commands', () => {
  it('marks every shell block it does not run, with a reason', () => {
    expect(blocks.filter(unrunnable).map((block) => block.where)).toEqual([]);
    expect(blocks.filter((block) => block.notRun === undefined).length).toBeGreaterThanOrEqual(7);
  });

  it('run as written, in order: the walk-through evaluates, then approves version 2', async () => {
    const result = await bash(scriptOf(blocks, CLI_BIN));
    const lastBlock = [...result.stderr.matchAll(/::block (\S+)/g)].at(-1)?.[1];
    expect(result.code, `failed in ${lastBlock}:\n${result.stderr.slice(-3000)}`).toBe(0);
    expect(result.stderr).not.toMatch(/\n\s+at /);

    // What the walk-through says it did, read back through the API: its run was evaluated (eight
    // cases fixed, none regressed) and approved, and its proposal became version 2.
    const vars = new Map(
      [...result.stdout.matchAll(/^::vars (\S+) P=(\S*) RUN=(\S*)$/gm)].map(([, where, P, RUN]) => [
        where,
        { P: P ?? '', RUN: RUN ?? '' },
      ]),
    );
    const walkThrough = blocks.find((block) => block.code.includes('evaluate "$RUN"'));
    const { P, RUN } = vars.get(walkThrough?.where ?? '') ?? { P: '', RUN: '' };
    const client = createPipelineSynthesisClient({
      baseUrl: stack.apiUrl,
      token: stack.teams[0]?.apiToken as string,
    });
    const { data: run } = await client.GET('/synthesis-runs/{id}', { params: { path: { id: RUN } } });
    expect(run).toMatchObject({ pipelineId: P, status: 'approved' });
    expect(run?.evaluation?.fixed).toHaveLength(8);
    expect(run?.evaluation?.regressed).toEqual([]);
    const { data: pipeline } = await client.GET('/pipelines/{pipelineId}', {
      params: { path: { pipelineId: P } },
    });
    expect(pipeline?.activeConfigurationId).toBe(run?.proposedConfigurationId);
  }, 300_000);
});
