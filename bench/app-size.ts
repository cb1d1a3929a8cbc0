/**
 * The review application's transfer size: web/src built exactly as it is served (web/build.ts),
 * gzipped as API Gateway compresses it for browsers. Target: the JavaScript at most 60 KB gzipped.
 *
 *   npx tsx bench/app-size.ts
 */
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildAppAssets } from '../web/build.ts';

export const MAX_APP_JS_GZIP_BYTES = 60 * 1024;

export interface AppSize {
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
  cssGzipBytes: number;
}

export async function measureAppSize(): Promise<AppSize> {
  const assets = await buildAppAssets();
  const sum = (paths: string[], measure: (body: string) => number) =>
    paths.reduce((total, path) => total + measure(assets.files[path]?.body ?? ''), 0);
  const raw = (body: string) => Buffer.byteLength(body);
  const gzipped = (body: string) => gzipSync(body).length;
  return {
    jsBytes: sum(assets.scripts, raw),
    jsGzipBytes: sum(assets.scripts, gzipped),
    cssBytes: sum(assets.styles, raw),
    cssGzipBytes: sum(assets.styles, gzipped),
  };
}

export function formatAppSize(size: AppSize): string {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const ok = size.jsGzipBytes <= MAX_APP_JS_GZIP_BYTES ? 'ok' : 'MISSED';
  return [
    `JavaScript ${kb(size.jsBytes)}, gzipped ${kb(size.jsGzipBytes)} (target ≤ ${kb(MAX_APP_JS_GZIP_BYTES)}) ${ok}`,
    `CSS ${kb(size.cssBytes)}, gzipped ${kb(size.cssGzipBytes)}`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatAppSize(await measureAppSize()));
}
