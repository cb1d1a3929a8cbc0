/**
 * One declaration per background function and per queue: HANDLERS (lambdas/functions.ts) lists the
 * modules of lambdas/handlers/, and a handler's entry or a queue's name is written in the code only
 * where it is declared — the CDK stack and the local stack name none, they loop over the lists.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDLERS } from '../../../lambdas/functions.ts';
import { moduleOf } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { QUEUES } from '../../../lambdas/queues.ts';
import { REPO_ROOT } from '../../../lib/bundling.ts';

const HANDLER_DECLARATIONS = 'lambdas/functions.ts';
const QUEUE_TABLE = 'lambdas/queues.ts';

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The code of lambdas/, lib/, local/ and bin/ by path relative to the repository. */
const TEXTS = new Map(
  ['lambdas', 'lib', 'local', 'bin']
    .flatMap((folder) => sourceFiles(join(REPO_ROOT, folder)))
    .map((file) => [relative(REPO_ROOT, file), readFileSync(file, 'utf8')]),
);

/** The files that write `name` as a string literal, in any quotes. */
function mentionsOf(name: string): string[] {
  const literal = new RegExp(`(['"\`])${name.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&')}\\1`);
  return [...TEXTS].filter(([, text]) => literal.test(text)).map(([file]) => file);
}

describe('one declaration per background function', () => {
  it('declares every module of lambdas/handlers/ in HANDLERS, once, and declares no other', () => {
    const modules = readdirSync(join(REPO_ROOT, 'lambdas', 'handlers')).map((name) =>
      name.replace(/\.ts$/, ''),
    );
    const entries = HANDLERS.map((handler) => handler.entry);

    expect(new Set(entries).size).toBe(entries.length);
    expect([...entries].sort()).toEqual(modules.sort());
  });

  it.each(HANDLERS.map((handler) => handler.entry))(
    "writes the entry '%s' in lambdas/, lib/, local/ and bin/ only in its declaration",
    (entry) => {
      expect(mentionsOf(entry)).toEqual([HANDLER_DECLARATIONS]);
    },
  );
});

describe('one declaration per queue', () => {
  it('names every queue once in the queue table', () => {
    const names = QUEUES.map((queue) => queue.name);

    expect(new Set(names).size).toBe(names.length);
  });

  it.each(QUEUES.map((queue) => queue.name))(
    "writes the queue name '%s' only in the queue table and in the declarations that send to it or are triggered by it",
    (name) => {
      const declaringHandlers = HANDLERS.some((handler) => JSON.stringify(handler).includes(`"${name}"`));
      const sendingOperations = OPERATIONS.filter((operation) =>
        (operation.access.send ?? []).some((queue) => queue === name),
      ).map((operation) => `lambdas/operations/${moduleOf(operation)}.ts`);
      const allowed = [
        QUEUE_TABLE,
        ...(declaringHandlers ? [HANDLER_DECLARATIONS] : []),
        ...sendingOperations,
      ];

      expect(mentionsOf(name).sort()).toEqual([...new Set(allowed)].sort());
    },
  );

  it('gives every queue a function that sends to it, or a stream source that records its failures there', () => {
    const sent = [...HANDLERS, ...OPERATIONS].flatMap((declaration) => declaration.access.send ?? []);
    const failures = HANDLERS.flatMap((handler) =>
      'streams' in handler.trigger ? handler.trigger.streams.map((source) => source.onFailure) : [],
    );
    for (const queue of QUEUES) {
      expect([...sent, ...failures] as string[], queue.name).toContain(queue.name);
    }
  });
});
