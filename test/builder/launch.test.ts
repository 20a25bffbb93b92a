/**
 * builder/launch.mjs (`npm run catalogue`): the CLI from a bundle in .local/cli, rebuilt when a source is newer,
 * reused otherwise; exit codes as the CLI's own; the AWS SDK still loaded only for s3:// targets.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const CURRENT = join(ROOT, '.local/cli/current.json');

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
  JSON.parse(readFileSync(CURRENT, 'utf8')) as { dir: string; builtAtMs: number; inputs: string[] };

describe('npm run catalogue (builder/launch.mjs)', () => {
  it('runs the CLI with its exit codes, rebuilding the bundle only when a source is newer', async () => {
    const valid = await launch('validate', '--source', 'fixtures/catalogue');
    expect(valid).toMatchObject({ code: 0 });
    expect(valid.stdout).toMatch(/^fixtures\/catalogue: valid \(204 modules/);
    const first = current();
    expect(first.inputs).toEqual(
      expect.arrayContaining(['builder/cli.ts', 'builder/publish.ts', 'proxy/format.ts']),
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

  it('keeps the AWS SDK out of what every command loads', async () => {
    expect(await launch('--help')).toMatchObject({ code: 0 });
    const entry = readFileSync(join(ROOT, '.local/cli', current().dir, 'cli.js'), 'utf8');
    const staticImports = [...entry.matchAll(/^import\s[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(staticImports.length).toBeGreaterThan(0);
    expect(staticImports.filter((name) => name?.startsWith('@aws-sdk'))).toEqual([]);
    expect(entry).toMatch(/import\("\.\/[^"]+\.js"\)/); // the s3:// target's chunk, loaded on demand
  });
});
