/**
 * Readable renderings for people: aligned tables, key/value blocks, a run and its diff (coloured
 * like `git diff` when stdout is a terminal and NO_COLOR is unset). `--json` bypasses all of it.
 */
import type { RunDiff, SynthesisRun } from './client.ts';

export interface Palette {
  red(text: string): string;
  green(text: string): string;
  cyan(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;
const COLOURS: Palette = {
  red: wrap(31, 39),
  green: wrap(32, 39),
  cyan: wrap(36, 39),
  bold: wrap(1, 22),
  dim: wrap(2, 22),
};
const NO_COLOURS: Palette = { red: plain, green: plain, cyan: plain, bold: plain, dim: plain };

/** Colour only for a terminal, unless NO_COLOR is set (https://no-color.org) or FORCE_COLOR asks for it. */
export function paletteFor(isTTY: boolean, env: NodeJS.ProcessEnv): Palette {
  if (env.NO_COLOR) return NO_COLOURS;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== '0') return COLOURS;
  return isTTY ? COLOURS : NO_COLOURS;
}

const cell = (value: unknown): string =>
  value === null || value === undefined ? '-' : typeof value === 'string' ? value : JSON.stringify(value);

/** Rows as aligned columns under a header; `(none)` for no rows. */
export function table(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((line) => (line[index] ?? '').length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.toUpperCase())), ...cells.map(line)].join('\n');
}

/** `key: value` lines, keys aligned; absent values are left out. */
export function fields(
  record: Record<string, unknown>,
  keys: readonly string[] = Object.keys(record),
): string {
  const shown = keys.filter((key) => record[key] !== undefined);
  const width = Math.max(0, ...shown.map((key) => key.length));
  return shown.map((key) => `${`${key}:`.padEnd(width + 2)}${cell(record[key])}`).join('\n');
}

export function renderRun(run: SynthesisRun, palette: Palette): string {
  const status = run.status === 'failed' ? palette.red(run.status) : palette.bold(run.status);
  const head = fields(
    {
      id: run.id,
      pipeline: run.pipelineId,
      status,
      handler: run.synthesisHandler,
      confidence: run.confidence,
      base: run.baseConfigurationId,
      proposed: run.proposedConfigurationId,
      created: run.createdAt,
      by: who(run.triggeredByName, run.triggeredBy),
      'approved by': who(run.approvedByName, run.approvedBy) ?? undefined,
      'rejected by': who(run.rejectedByName, run.rejectedBy) ?? undefined,
      error: run.errorMessage ?? undefined,
      retrying: run.retryReason ?? undefined,
      usage: run.usage ? usageLine(run.usage) : undefined,
    },
    undefined,
  );
  const parts = [head];
  if (run.diagnosis) {
    parts.push(`\n${palette.bold('Diagnosis')}: ${run.diagnosis.summary}`);
    for (const finding of run.diagnosis.findings) {
      parts.push(`  [${finding.id}] ${finding.description} (${plural(finding.signalIds.length, 'signal')})`);
    }
  }
  if (run.changes.length > 0) {
    parts.push(`\n${palette.bold('Changes')}`);
    for (const change of run.changes) {
      parts.push(
        `  [${change.id}] ${change.slotId}: ${change.description} (fixes ${change.findingIds.join(', ')})`,
      );
    }
  }
  if (run.structuredWarnings.length > 0) {
    parts.push(`\n${palette.bold('Warnings')}`);
    for (const warning of run.structuredWarnings) parts.push(`  ${warning.type}: ${warning.message}`);
  }
  return parts.join('\n');
}

function usageLine(usage: NonNullable<SynthesisRun['usage']>): string {
  const cost = usage.costUsd;
  const costText = typeof cost === 'number' ? `, $${cost.toFixed(4)}` : '';
  return `${usage.model}: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.attempts} attempts${costText}`;
}

export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** A duration for people: "333 ms", "1.2 s", "2.5 min"; `signed` puts "+" before a gain. */
export function duration(ms: number, signed = false): string {
  const size = Math.abs(ms);
  const text =
    size < 1000
      ? `${Math.round(size)} ms`
      : size < 60_000
        ? `${Number((size / 1000).toFixed(1))} s`
        : `${Number((size / 60_000).toFixed(1))} min`;
  const sign = ms < 0 && text !== '0 ms' ? '-' : signed ? '+' : '';
  return `${sign}${text}`;
}

/** A person as people read them: the name (an email, a token's name) the API gave, else the id. */
export const who = (name: string | null | undefined, id: string | null): string | null =>
  id === null ? null : (name ?? id);

const valueText = (value: unknown) => JSON.stringify(value);

/** The diff as `git diff` shows one: a hunk per slot, `-` before and `+` after for each setting. */
export function renderDiff(diff: RunDiff, palette: Palette): string {
  const lines = [
    palette.bold(`run ${diff.runId}: version ${diff.base.version} → version ${diff.proposed.version}`),
    palette.dim(`--- ${diff.base.id} (version ${diff.base.version})`),
    palette.dim(`+++ ${diff.proposed.id} (version ${diff.proposed.version})`),
  ];
  for (const slot of diff.slots) {
    if (slot.status === 'unchanged') continue;
    const changes = slot.changeIds.length > 0 ? ` changes ${slot.changeIds.join(', ')}` : '';
    lines.push(palette.cyan(`@@ ${slot.slotId} (${slot.kind}) ${slot.status}${changes} @@`));
    if (slot.status === 'added') lines.push(palette.green(`+ slot ${slot.name}`));
    if (slot.status === 'removed') lines.push(palette.red(`- slot ${slot.name}`));
    for (const setting of slot.settings) {
      if (setting.before !== null) lines.push(palette.red(`- ${setting.key}: ${valueText(setting.before)}`));
      if (setting.after !== null) lines.push(palette.green(`+ ${setting.key}: ${valueText(setting.after)}`));
    }
  }
  const unchanged = diff.slots.filter((slot) => slot.status === 'unchanged').length;
  if (unchanged > 0) lines.push(palette.dim(`(${unchanged} slot${unchanged === 1 ? '' : 's'} unchanged)`));
  return lines.join('\n');
}
