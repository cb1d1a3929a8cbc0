import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleOf } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { REPO_ROOT } from '../../../lib/bundling.ts';

/** The modules of lambdas/operations/ that declare no operation: the shape, the list, the document. */
const SUPPORT_MODULES = [
  'declaration',
  'functions',
  'index',
  'openapi',
  'openapi-build',
  'page-query',
  'parameters',
  'shapes',
];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('one declaration per operation', () => {
  it('lists every operation module, and every listed operation has its module', () => {
    const modules = readdirSync(join(REPO_ROOT, 'lambdas', 'operations'))
      .map((name) => name.replace(/\.ts$/, ''))
      .filter((name) => !SUPPORT_MODULES.includes(name) && name !== 'generated');
    expect([...new Set(OPERATIONS.map(moduleOf))].sort()).toEqual(modules.sort());
    expect(new Set(OPERATIONS.map((operation) => operation.name)).size).toBe(OPERATIONS.length);
  });

  it('states each path in lambdas/, lib/ and local/ only in the modules of the operations at that path', () => {
    const files = ['lambdas', 'lib', 'local'].flatMap((folder) => sourceFiles(join(REPO_ROOT, folder)));
    const texts = new Map(files.map((file) => [relative(REPO_ROOT, file), readFileSync(file, 'utf8')]));
    for (const path of new Set(OPERATIONS.map((operation) => operation.path))) {
      const owners = OPERATIONS.filter((operation) => operation.path === path).map(
        (operation) => `lambdas/operations/${moduleOf(operation)}.ts`,
      );
      const mentions = [...texts].filter(([, text]) => text.includes(`'${path}'`)).map(([file]) => file);
      expect(mentions.sort(), path).toEqual([...new Set(owners)].sort());
    }
  });
});
