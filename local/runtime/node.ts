/**
 * Which Node runs the local functions, and in what: worker threads of this process when its Node
 * is Lambda's major (24) and its time zone Lambda's (UTC); otherwise child processes on Node 24
 * from the `node-linux-<arch>` package that package.json lists as an optional dependency, or on
 * this process's Node with a warning.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EnvironmentKind } from './sandboxes.ts';

/** The Node major of the functions' Lambda runtime (lib/service-function.ts: NODEJS_24_X). */
export const LAMBDA_NODE_MAJOR = 24;

export interface FunctionNode {
  /** The binary that runs each function's execution environment. */
  execPath: string;
  version: string;
  /** Set when the functions run on another major than Lambda's, saying why. */
  warning?: string;
}

const require = createRequire(import.meta.url);

/** Node 24 from node_modules when this platform has its package, else process.execPath. */
export function functionNode(): FunctionNode {
  const packageName = `node-${process.platform}-${process.arch}`;
  try {
    const manifest = require.resolve(`${packageName}/package.json`);
    const binary = path.join(path.dirname(manifest), 'bin', 'node');
    const { version } = require(manifest) as { version: string };
    if (existsSync(binary) && Number(version.split('.')[0]) === LAMBDA_NODE_MAJOR)
      return { execPath: binary, version: `v${version}` };
  } catch {
    // Not installed on this platform (npm skips optional packages of other platforms).
  }
  const ownMajor = Number(process.versions.node.split('.')[0]);
  return {
    execPath: process.execPath,
    version: process.version,
    ...(ownMajor === LAMBDA_NODE_MAJOR
      ? {}
      : {
          warning: `Functions run on this machine's Node ${process.version}, not on Lambda's Node ${LAMBDA_NODE_MAJOR}: npm installs ${packageName}@${LAMBDA_NODE_MAJOR} only where the registry has it (linux x64 and arm64).`,
        }),
  };
}

/**
 * Worker threads of this process by default, where they run the functions as Lambda would: on
 * Lambda's Node major, in UTC (a worker's TZ variable cannot change the time zone, which is the
 * process's; `npm start` runs in UTC). Elsewhere, or with LOCAL_ENVIRONMENTS=processes, child
 * processes on functionNode()'s Node, which keep Lambda's Node and time zone on any machine.
 * Threads measured faster: about 10 % more polls a second than processes, one process instead of
 * one per environment (bench/local-stack.ts, README).
 */
export function environmentKind(
  env: Readonly<Record<string, string | undefined>> = process.env,
  node: { version: string; timeZone: string } = {
    version: process.versions.node,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  },
): EnvironmentKind {
  if (env.LOCAL_ENVIRONMENTS === 'processes') return 'process';
  const lambdaMajor = Number(node.version.split('.')[0]) === LAMBDA_NODE_MAJOR;
  return lambdaMajor && UTC_ZONES.has(node.timeZone) ? 'worker' : 'process';
}

const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu']);
