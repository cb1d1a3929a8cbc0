/**
 * The side-by-side comparison of a slot's settings: every key of both versions, the changed ones
 * marked, and long text (prompts, instructions) diffed by line, or by word when it is one line.
 */
import { type Change, diffLines, diffWords } from 'diff';
import { formatValue } from './format.ts';

export interface TextPart {
  text: string;
  kind: 'same' | 'added' | 'removed';
}

export interface SettingRow {
  key: string;
  /** undefined: the key is absent on that side. */
  before: unknown;
  after: unknown;
  changed: boolean;
  /** For long text that changed: the before side (same + removed) and the after side (same + added). */
  text?: { before: TextPart[]; after: TextPart[]; by: 'line' | 'word' };
}

/** Text longer than this, or on several lines, is diffed inside the value. */
export const LONG_TEXT = 60;
/** Give up on an inline diff that takes longer (a huge, entirely rewritten prompt): show both sides. */
const DIFF_TIMEOUT_MS = 300;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function textDiff(before: string, after: string): SettingRow['text'] {
  const byLine = before.includes('\n') || after.includes('\n');
  const changes: Change[] | undefined = byLine
    ? diffLines(before, after, { timeout: DIFF_TIMEOUT_MS })
    : diffWords(before, after, { timeout: DIFF_TIMEOUT_MS });
  if (!changes) return undefined;
  const part = (change: Change): TextPart => ({
    text: change.value,
    kind: change.added ? 'added' : change.removed ? 'removed' : 'same',
  });
  return {
    before: changes.filter((change) => !change.added).map(part),
    after: changes.filter((change) => !change.removed).map(part),
    by: byLine ? 'line' : 'word',
  };
}

/** The rows of a slot's comparison: the base's keys in their order, then keys the proposal adds. */
export function settingRows(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): SettingRow[] {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  return keys.map((key) => {
    const was = before?.[key];
    const now = after?.[key];
    const row: SettingRow = { key, before: was, after: now, changed: !same(was, now) };
    if (row.changed && was !== undefined && now !== undefined) {
      const beforeText = formatValue(was);
      const afterText = formatValue(now);
      const long = [beforeText, afterText].some((text) => text.length > LONG_TEXT || text.includes('\n'));
      if (long) {
        const text = textDiff(beforeText, afterText);
        if (text) row.text = text;
      }
    }
    return row;
  });
}
