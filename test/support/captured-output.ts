/**
 * What a test's handlers write to stdout and stderr (Powertools log lines, EMF metric sets),
 * captured between start() and stop() instead of reaching the terminal.
 */
export interface CapturedOutput {
  /** Forgets what was captured and captures from now on. */
  start(): void;
  /** Gives stdout and stderr back. */
  stop(): void;
  /** Every line written that is a JSON object, parsed. */
  jsonLines(): Array<Record<string, unknown>>;
}

export function capturedOutput(): CapturedOutput {
  const output: string[] = [];
  const restore: Array<() => void> = [];
  return {
    start() {
      output.length = 0;
      for (const stream of [process.stdout, process.stderr]) {
        const original = stream.write;
        stream.write = ((chunk: unknown) => {
          output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
          return true;
        }) as typeof stream.write;
        restore.push(() => {
          stream.write = original;
        });
      }
    },
    stop() {
      for (const undo of restore.splice(0)) undo();
    },
    jsonLines() {
      return output
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
  };
}
