/* The CLI's real bin as a separate process, for the end-to-end tests: its exit code and output. */
import { spawn } from 'node:child_process';
import { CLI_BIN } from '../../cli/build.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `pipeline-synthesis <args>` in `cwd` with `env` (FORCE_COLOR removed, no stdin), calling
 * `whileRunning` once the process runs (e.g. to press Ctrl-C), and answers when it has exited.
 */
export async function runCli(
  args: string[],
  {
    cwd,
    env,
    whileRunning,
  }: {
    cwd: string;
    env: Record<string, string | undefined>;
    whileRunning?: (child: ReturnType<typeof spawn>, output: () => CliResult) => Promise<void>;
  },
): Promise<CliResult> {
  const childEnv = { ...env };
  delete childEnv.FORCE_COLOR;
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result: CliResult = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    result.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    result.stderr += chunk;
  });
  const exited = new Promise<void>((resolve) =>
    child.once('close', (code) => {
      result.code = code;
      resolve();
    }),
  );
  await whileRunning?.(child, () => result);
  await exited;
  return result;
}
