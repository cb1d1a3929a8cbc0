/*
 * The optimize bench's runner, as a team would write one for `evaluate --exec`: reads
 * {arm, configuration, case} on stdin and answers whether the simulated pipeline passes the
 * recorded case (its input is the simulated case) with that configuration. Bundled to plain
 * JavaScript before the bench, so each case costs one `node` start and no TypeScript loader.
 */
import { type SimCase, simulate } from './optimize-sim.ts';

interface RunnerInput {
  configuration: { slots: { id: string; settings: Record<string, unknown> }[] };
  case: { input?: SimCase };
}

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  text += chunk;
});
process.stdin.on('end', () => {
  const { configuration, case: recorded } = JSON.parse(text) as RunnerInput;
  const setting = (slotId: string, key: string) =>
    Number(configuration.slots.find((slot) => slot.id === slotId)?.settings[key]);
  const outcome = simulate(
    {
      timeoutMs: setting('retrieve', 'timeoutMs'),
      maxTokens: setting('answer', 'maxTokens'),
      temperature: setting('answer', 'temperature'),
    },
    recorded.input as SimCase,
  );
  process.stdout.write(
    JSON.stringify(outcome.passed ? { passed: true } : { passed: false, detail: outcome.error }),
  );
});
