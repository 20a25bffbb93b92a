/**
 * The soak's sampler (bench section 15) reads the size of a store's data directory while the store writes and
 * deletes files in it: here a second process churns a tree as LevelDB does (files and folders made and removed)
 * while bytesUnder reads it, and no reading may fail; a still tree reads exactly.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bytesUnder } from '../machine.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Makes and removes folders of small files under `dir` until killed, as fast as it can. */
const CHURN = `
const { mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const dir = process.argv[1];
for (let i = 0; ; i++) {
  const sub = join(dir, 'd' + (i % 8));
  rmSync(sub, { recursive: true, force: true });
  mkdirSync(join(sub, 'inner'), { recursive: true });
  for (let f = 0; f < 4; f++) writeFileSync(join(sub, 'inner', f + '.ldb'), 'x'.repeat(100));
  if (i === 0) process.stdout.write('churning\\n');
}
`;

describe('bytesUnder', () => {
  it('sums every file under a still tree', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bytes-under-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    writeFileSync(join(dir, 'one'), 'x'.repeat(10));
    writeFileSync(join(dir, 'a', 'two'), 'x'.repeat(200));
    writeFileSync(join(dir, 'a', 'b', 'three'), 'x'.repeat(3000));
    expect(bytesUnder(dir)).toBe(3210);
    expect(bytesUnder(join(dir, 'gone'))).toBe(0);
  });

  it('never fails while another process makes and deletes files and folders in the tree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bytes-under-'));
    dirs.push(dir);
    const churn = spawn(process.execPath, ['-e', CHURN, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        churn.stdout.once('data', () => resolve());
        churn.once('exit', (code) => reject(new Error(`the churning process ended (${code})`)));
      });
      let readings = 0;
      let seen = 0;
      for (const until = Date.now() + 1_500; Date.now() < until; readings++) {
        const bytes = bytesUnder(dir);
        expect(bytes).toBeGreaterThanOrEqual(0);
        expect(bytes).toBeLessThanOrEqual(8 * 4 * 100);
        if (bytes > 0) seen++;
      }
      expect(seen).toBeGreaterThan(0);
      expect(readings).toBeGreaterThan(100);
    } finally {
      churn.kill('SIGKILL');
    }
  });
});
