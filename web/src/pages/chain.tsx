/**
 * A run's chain on the run page: its first run and every refinement, each round's held-out figures
 * (the ones that count), the best run, and which of its changes the evaluation says to approve.
 */
import { api, client } from '../api.ts';
import { Link } from '../router.tsx';
import type { Run } from '../types.ts';
import { ErrorNotice, useLoad } from '../ui.tsx';

const usd = (value: number | null) =>
  value === null ? '–' : `$${value.toFixed(value > 0 && value < 0.01 ? 4 : 2)}`;

export function ChainSection({ run }: { run: Run }) {
  const chain = useLoad(
    async () =>
      run.parentRunId || run.evaluation
        ? api(client.GET('/synthesis-runs/{id}/chain', { params: { path: { id: run.id } } }))
        : undefined,
    [run.id, run.status, run.evaluation?.updatedAt],
  );
  const rounds = chain.data?.runs ?? [];
  if (chain.error) return <ErrorNotice error={chain.error} />;
  if (rounds.length < 2) return null;
  const best = rounds.find((round) => round.runId === chain.data?.bestRunId);
  return (
    <section aria-labelledby="chain" class="card chain">
      <h2 id="chain">Refinement chain</h2>
      <p class="muted small">
        Each round learned from the one before; held-out cases were never shown to a synthesis and are the
        figures that count.
      </p>
      <div class="table-scroll">
        <table class="list cards-on-phone" aria-label="Rounds of the chain">
          <thead>
            <tr>
              <th scope="col">Round</th>
              <th scope="col">Run</th>
              <th scope="col">Changes</th>
              <th scope="col">Held-out fixed</th>
              <th scope="col">Held-out broken</th>
              <th scope="col">Still failing</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rounds.map((round, index) => (
              <tr key={round.runId} aria-current={round.runId === run.id ? 'page' : undefined}>
                <td data-label="Round">
                  {index + 1}
                  {round.runId === chain.data?.bestRunId ? <strong> · best</strong> : null}
                </td>
                <td data-label="Run">
                  {round.runId === run.id ? (
                    <span>this run</span>
                  ) : (
                    <Link to={`runs/${encodeURIComponent(round.runId)}`}>run of round {index + 1}</Link>
                  )}{' '}
                  <span class={`status status-${round.status}`}>{round.status}</span>
                </td>
                <td data-label="Changes">{round.changeCount}</td>
                <td data-label="Held-out fixed">
                  {round.heldOut ? `${round.heldOut.fixed.length} of ${round.heldOut.baseFailed}` : '–'}
                </td>
                <td
                  data-label="Held-out broken"
                  class={round.heldOut?.regressed.length ? 'status-failed' : ''}
                >
                  {round.heldOut ? round.heldOut.regressed.length : '–'}
                </td>
                <td data-label="Still failing">{round.heldOut ? round.heldOut.stillFailing.length : '–'}</td>
                <td data-label="Cost">{usd(round.costUsd ?? round.estimatedCostUsd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {best ? (
        <p class="chain-best">
          Best run:{' '}
          <Link to={`runs/${encodeURIComponent(best.runId)}`}>round {rounds.indexOf(best) + 1}</Link>
          {best.recommendation ? ` — ${best.recommendation.text}` : ''} It stays generated until a person
          approves it.
        </p>
      ) : null}
    </section>
  );
}
