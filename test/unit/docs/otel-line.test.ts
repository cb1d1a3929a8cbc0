/**
 * The project's tests exercise what the docs tell users to install: package.json has no
 * `overrides` (an entry there would make the project resolve what a user's plain install cannot),
 * and each OpenTelemetry or OpenFeature package the docs pin is the version the project itself
 * depends on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  overrides?: unknown;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};
const declared = { ...manifest.dependencies, ...manifest.devDependencies };

/** `name@x.y.z` as the docs' install lines write them, for the packages of both ecosystems. */
function pinnedInDocs(): Map<string, Set<string>> {
  const pins = new Map<string, Set<string>>();
  for (const file of ['README.md', 'docs/opentelemetry.md', 'docs/openfeature.md']) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [, name, version] of text.matchAll(
      /(@(?:opentelemetry|openfeature)\/[a-z0-9-]+)@(\d+\.\d+\.\d+)/g,
    )) {
      if (!name || !version) continue;
      const versions = pins.get(name) ?? new Set<string>();
      versions.add(version);
      pins.set(name, versions);
    }
  }
  return pins;
}

describe("the project's OpenTelemetry line", () => {
  it('needs no overrides to install', () => {
    expect(manifest.overrides).toBeUndefined();
  });

  it('depends on the versions the docs pin, for every pinned package it uses', () => {
    const pins = pinnedInDocs();
    expect(pins.size).toBeGreaterThan(3);
    const compared: string[] = [];
    for (const [name, versions] of pins) {
      expect(versions.size, `${name} is pinned to one version across the docs`).toBe(1);
      const own = declared[name];
      if (own === undefined) continue;
      compared.push(name);
      expect(own.replace(/^[\^~]/, ''), `${name} in package.json`).toBe([...versions][0]);
    }
    expect(compared.length).toBeGreaterThan(2);
  });
});
