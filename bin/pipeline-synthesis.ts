/**
 * The `pipeline-synthesis` CLI's entry (npm bin): esbuild bundles it to dist/pipeline-synthesis.cjs
 * (cli/build.ts), so it starts as plain JavaScript. Its code lives in cli/.
 */
import { runCli } from '../cli/program.ts';

const interrupt = new AbortController();
// The first Ctrl-C stops waiting (the command then exits 130); a second one exits at once.
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  interrupt.abort();
});

runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  interrupt: interrupt.signal,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
