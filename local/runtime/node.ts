/**
 * Which Node runs the local functions: Lambda's major (24), from the `node-linux-<arch>` package
 * that package.json lists as an optional dependency, or this process's Node with a warning.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

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
