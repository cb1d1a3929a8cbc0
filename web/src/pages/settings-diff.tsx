/** A slot's settings before and after, side by side; changed keys highlighted, long text diffed. */
import { formatValue } from '../format.ts';
import { type SettingRow, settingRows, type TextPart } from '../settings-diff.ts';

export function SettingsDiff(props: {
  slotName: string;
  before: Record<string, unknown> | undefined;
  after: Record<string, unknown> | undefined;
  baseVersion: number;
  proposedVersion: number;
}) {
  const rows = settingRows(props.before, props.after);
  const beforeLabel = `Before (version ${props.baseVersion})`;
  const afterLabel = `After (version ${props.proposedVersion})`;
  return (
    <table class="diff">
      <caption>
        Settings of {props.slotName}: {rows.filter((row) => row.changed).length} changed
      </caption>
      <thead>
        <tr>
          <th scope="col">Setting</th>
          <th scope="col">{beforeLabel}</th>
          <th scope="col">{afterLabel}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key} class={row.changed ? 'changed' : undefined}>
            <th scope="row">
              {row.key}
              {row.changed ? <span class="changed-mark"> changed</span> : null}
            </th>
            <td data-label={beforeLabel} class={row.changed ? 'old' : undefined}>
              <Value row={row} side="before" />
            </td>
            <td data-label={afterLabel} class={row.changed ? 'new' : undefined}>
              <Value row={row} side="after" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Value({ row, side }: { row: SettingRow; side: 'before' | 'after' }) {
  const value = row[side];
  if (value === undefined) return <span class="muted">(not set)</span>;
  if (row.text) {
    return (
      <pre class="value" title={`Compared by ${row.text.by}`}>
        {row.text[side].map((part, index) => (
          <Part key={index} part={part} />
        ))}
      </pre>
    );
  }
  return <pre class="value">{formatValue(value)}</pre>;
}

function Part({ part }: { part: TextPart }) {
  if (part.kind === 'removed') return <del>{part.text}</del>;
  if (part.kind === 'added') return <ins>{part.text}</ins>;
  return <>{part.text}</>;
}
