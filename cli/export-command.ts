/**
 * `pipeline-synthesis export <pipelineId> [--output file]`: every record of a pipeline as NDJSON,
 * following the API's pages (`Link: <…>; rel="next"`) one at a time, with a progress line on stderr.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { call } from './api.ts';
import { contextOf, type Io } from './context.ts';
import { CliFailure, EXIT } from './failures.ts';
import type { ProgressStream } from './wait.ts';

/** The cursor of the next page from a Link header, or null on the last page. */
export function nextCursorOf(link: string | null): string | null {
  if (!link) return null;
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  if (!match?.[1]) return null;
  return new URL(match[1], 'http://link.invalid').searchParams.get('cursor');
}

/** Writes a page, waiting for a file to drain so that memory holds one page at most. */
async function write(stream: ProgressStream | WriteStream, text: string): Promise<void> {
  if (stream.write(text) === false && 'once' in stream) {
    await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  }
}

export function addExportCommand(program: Command, io: Io): void {
  program
    .command('export <pipelineId>')
    .description('every record of a pipeline as NDJSON ({"type", "record"} a line), all pages')
    .option('--output <file>', 'write to this file instead of stdout')
    .action(async (pipelineId: string, options: { output?: string }, command: Command) => {
      const context = contextOf(io, command);
      let out: ProgressStream | WriteStream = io.stdout;
      let file: WriteStream | undefined;
      if (options.output) {
        file = createWriteStream(path.resolve(io.cwd, options.output));
        await new Promise<void>((resolve, reject) => {
          file?.once('open', () => resolve());
          file?.once('error', (error) =>
            reject(new CliFailure(EXIT.usage, `Cannot write ${options.output}: ${error.message}`)),
          );
        });
        out = file;
      }
      let records = 0;
      let pages = 0;
      let cursor: string | null | undefined;
      try {
        do {
          const answer = context.client.GET('/pipelines/{pipelineId}/export', {
            params: { path: { pipelineId }, query: cursor ? { cursor } : {} },
            parseAs: 'text',
          });
          const body = await call(answer, context.apiUrl);
          const { response } = await answer;
          await write(out, body);
          pages++;
          records += Number(response.headers.get('x-export-records') ?? 0);
          context.note(`exported ${records} records in ${pages} page${pages === 1 ? '' : 's'}`);
          cursor = nextCursorOf(response.headers.get('link'));
        } while (cursor);
      } finally {
        if (file) await new Promise<void>((resolve) => file?.end(() => resolve()));
      }
    });
}
