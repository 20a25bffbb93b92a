/**
 * A stock machine, as the tests and the first-run bench make one: its `node` a real older Node.js (the machine's
 * own when it has one, else the npm registry's 20) or any binary given, its npm the machine's, nothing else of
 * the npm or vitest running the test in its environment.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { nodeBinary, nodeCache } from './node-release.js';

/** Node.js 20 from the registry, for a machine that has no older `node` of its own. */
const STOCK_NODE = '20.20.2';

/** The directories of PATH holding an executable named `name`, in order. */
function onPath(name: string): string[] {
  return (process.env.PATH ?? '').split(delimiter).filter((directory) => {
    try {
      accessSync(join(directory, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The machine's own Node.js older than 22 (a stock machine's 20), else the registry's 20 (cached once). */
export function olderNode(): string {
  for (const directory of onPath('node')) {
    if (directory.startsWith(nodeCache())) continue;
    const binary = join(directory, 'node');
    const major = Number(
      execFileSync(binary, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }),
    );
    if (major < 22) return binary;
  }
  return nodeBinary(STOCK_NODE);
}

/**
 * The environment of a machine whose `node` is `binary`: a PATH with it first (a link in `directory`), then the
 * machine's npm (which runs on whatever `node` comes first). CATALOGUE_NODE_CACHE is this machine's cache unless
 * `env` says otherwise.
 */
export function stockMachine(
  directory: string,
  binary: string,
  env: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  mkdirSync(directory, { recursive: true });
  symlinkSync(binary, join(directory, 'node'));
  const npm = onPath('npm').find((candidate) => !candidate.includes('node_modules'));
  if (!npm) throw new Error('no npm on PATH');
  // How the machine reaches the registry stays: its proxies and certificate authorities.
  const network = Object.entries(process.env).filter(([name]) =>
    /^(https?_proxy|no_proxy|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir)$/i.test(name),
  );
  return {
    ...Object.fromEntries(network),
    HOME: process.env.HOME,
    PATH: [directory, npm, '/usr/bin', '/bin'].join(delimiter),
    CATALOGUE_NODE_CACHE: nodeCache(),
    TMPDIR: tmpdir(),
    ...env,
  };
}
