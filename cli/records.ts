/**
 * Reads the records of `signals add` and `executions add`: a JSON array, a JSON object holding
 * the array (`{"signals": [...]}`, as the API takes it) or NDJSON (one object a line), from a
 * file or `-` (stdin); and cuts them into the API's batches of at most 100.
 */
import { readFileSync } from 'node:fs';
import { UsageFailure } from './failures.ts';

export const BATCH_SIZE = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The records in `text`; `key` is the batch body's array ("signals" or "executions"). */
export function parseRecords(text: string, key: string, source: string): Record<string, unknown>[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageFailure(`${source} holds no records.`);
  let whole: unknown;
  try {
    whole = JSON.parse(trimmed);
  } catch {
    whole = undefined;
  }
  let records: unknown[];
  if (Array.isArray(whole)) records = whole;
  else if (isRecord(whole) && Array.isArray(whole[key])) records = whole[key] as unknown[];
  else if (isRecord(whole)) records = [whole];
  else {
    records = trimmed.split('\n').flatMap((line, index) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        throw new UsageFailure(
          `${source} line ${index + 1} is not JSON: expected a JSON array, {"${key}": [...]} or NDJSON.`,
        );
      }
    });
  }
  const bad = records.findIndex((record) => !isRecord(record));
  if (bad !== -1) throw new UsageFailure(`${source}: record ${bad + 1} is not a JSON object.`);
  if (records.length === 0) throw new UsageFailure(`${source} holds no records.`);
  return records as Record<string, unknown>[];
}

export function readRecords(file: string, key: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageFailure(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseRecords(text, key, file === '-' ? 'stdin' : file);
}

export function batches<T>(records: readonly T[], size = BATCH_SIZE): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < records.length; start += size) result.push(records.slice(start, start + size));
  return result;
}

/** A JSON object from a file (`pipelines create --file`). */
export function readJsonObject(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageFailure(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageFailure(`${file} is not valid JSON.`);
  }
  if (!isRecord(value)) throw new UsageFailure(`${file} must hold a JSON object.`);
  return value;
}
