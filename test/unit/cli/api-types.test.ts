import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes } from '../../../cli/generate-api-types.ts';

describe('the typed client', () => {
  it('is generated from the OpenAPI document as it is now (run `npm run generate:client` after changing it)', async () => {
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    const regenerated = await generateApiTypes();
    // A readable failure names the first line that differs, not 2,000 lines of diff.
    const committedLines = committed.split('\n');
    const regeneratedLines = regenerated.split('\n');
    const first = regeneratedLines.findIndex((line, index) => line !== committedLines[index]);
    expect(
      first === -1 && committedLines.length === regeneratedLines.length
        ? 'in step'
        : `cli/api-types.ts differs from the document at line ${first + 1}: ${regeneratedLines[first] ?? '(end)'}`,
    ).toBe('in step');
  });
});
