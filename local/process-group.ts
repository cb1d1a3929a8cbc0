/**
 * A child process that cannot outlive the local stack: it runs in a process group of its own, which
 * is ended as a whole, by an exit listener and, for deaths no listener sees, by a watchdog.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Socket } from 'node:net';

export const IS_WINDOWS = process.platform === 'win32';

/** Sends `signal` to the child's whole process group (the child alone on Windows). */
export function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (IS_WINDOWS) child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Makes sure the JVM cannot outlive this process. A synchronous 'exit' listener covers normal exits
 * (an async one would never finish); a tiny watchdog shell covers deaths no listener sees (SIGKILL,
 * a crash): it blocks on a pipe from us and kills the JVM's process group when the pipe closes.
 * Returns the function that disarms both.
 */
export function guardAgainstOrphan(child: ChildProcess): () => void {
  const onExit = () => killTree(child, 'SIGKILL');
  process.on('exit', onExit);
  let watchdog: ChildProcess | undefined;
  if (!IS_WINDOWS && child.pid !== undefined) {
    watchdog = spawn('sh', ['-c', 'read -r _; kill -s KILL -- "-$0" 2>/dev/null', String(child.pid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    watchdog.on('error', () => {});
    watchdog.unref();
    // The pipe must not keep the event loop alive; it only has to exist.
    watchdog.stdin?.on('error', () => {});
    if (watchdog.stdin instanceof Socket) watchdog.stdin.unref();
  }
  let disarmed = false;
  return () => {
    if (disarmed) return;
    disarmed = true;
    process.off('exit', onExit);
    if (watchdog?.pid !== undefined && watchdog.exitCode === null) {
      try {
        process.kill(watchdog.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
}
