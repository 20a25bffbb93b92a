/**
 * builder/launch.mjs (`npm run catalogue`): the CLI from a bundle in .local/cli, rebuilt when a source is newer,
 * reused otherwise; exit codes as the CLI's own; the AWS SDK still loaded only for s3:// targets.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { decodeManifest, manifestKey } from '../../builder/publish/manifest.js';

const ROOT = join(import.meta.dirname, '../..');
const CURRENT = join(ROOT, '.local/cli/current.json');
const FIXTURE = join(ROOT, 'fixtures/catalogue');

async function launch(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['builder/launch.mjs', ...args], {
      cwd: ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const current = () =>
  JSON.parse(readFileSync(CURRENT, 'utf8')) as {
    dir: string;
    builtAtMs: number;
    inputs: string[];
    fingerprint: string;
  };

describe('npm run catalogue (builder/launch.mjs)', () => {
  it('runs the CLI with its exit codes, rebuilding the bundle only when a source is newer', async () => {
    const valid = await launch('validate', '--source', 'fixtures/catalogue');
    expect(valid).toMatchObject({ code: 0 });
    expect(valid.stdout).toMatch(/^fixtures\/catalogue: valid \(204 modules/);
    const first = current();
    expect(first.inputs).toEqual(
      expect.arrayContaining(['builder/cli.ts', 'builder/publish/publish.ts', 'store/segments.ts']),
    );

    // Unchanged sources: the same bundle.
    expect(await launch('--help')).toMatchObject({ code: 0 });
    expect(current().dir).toBe(first.dir);

    // A bundle older than its sources is rebuilt before it runs.
    writeFileSync(CURRENT, JSON.stringify({ ...first, builtAtMs: 0 }));
    const usage = await launch('bogus');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown command bogus');
    const rebuilt = current();
    expect(rebuilt.dir).not.toBe(first.dir);
    expect(rebuilt.builtAtMs).toBeGreaterThan(0);
  });

  it('gives the CLI its fingerprint: a second publish takes over the unchanged modules', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cat-launch-'));
    const source = mkdtempSync(join(tmpdir(), 'cat-launch-source-'));
    try {
      for (const file of readdirSync(FIXTURE)) copyFileSync(join(FIXTURE, file), join(source, file));
      expect(await launch('build', '--source', source, '--out', out)).toMatchObject({ code: 0 });
      const modules = JSON.parse(readFileSync(join(source, 'modules.json'), 'utf8')) as { name: string }[];
      modules[0]!.name = 'Renamed by the launcher test';
      writeFileSync(join(source, 'modules.json'), JSON.stringify(modules)); // the fixture is indented
      const second = await launch('build', '--source', source, '--out', out, '--verbose');
      expect(second.code).toBe(0);
      // Reformatting the file changes every record's text: only a rewrite of the same text is reused.
      expect(second.stdout).not.toMatch(/unchanged modules taken over/);
      modules[1]!.name = 'Renamed again';
      writeFileSync(join(source, 'modules.json'), JSON.stringify(modules));
      const third = await launch('build', '--source', source, '--out', out, '--verbose');
      expect(third.code).toBe(0);
      expect(third.stdout).toContain(
        `${modules.length - 1} unchanged modules taken over from the current version`,
      );
      const pointer = JSON.parse(readFileSync(join(out, 'current.json'), 'utf8')) as { version: string };
      const manifest = decodeManifest(
        readFileSync(join(out, manifestKey('', pointer.version))),
        pointer.version,
      );
      expect(manifest?.reuse?.builder).toBe(`${current().fingerprint}/${process.version}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
      rmSync(source, { recursive: true, force: true });
    }
  });

  it('keeps the AWS SDK out of what every command loads', async () => {
    expect(await launch('--help')).toMatchObject({ code: 0 });
    const entry = readFileSync(join(ROOT, '.local/cli', current().dir, 'cli.js'), 'utf8');
    const staticImports = [...entry.matchAll(/^import\s[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(staticImports.length).toBeGreaterThan(0);
    expect(staticImports.filter((name) => name?.startsWith('@aws-sdk'))).toEqual([]);
    expect(entry).toMatch(/import\("\.\/[^"]+\.js"\)/); // the s3:// target's chunk, loaded on demand
  });
});
