/** The live version check: how an age reads, a catalogue with no live version, one that is live. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publishCatalogue } from '../../builder/publish/publish.js';
import { age, liveVersionCheck } from '../../ops/live-version.js';
import { DirectoryObjectStore } from '../../store/objects/directory.js';
import { smallSnapshot } from '../helpers/builder.js';

const dirs: string[] = [];
const directory = () => {
  const made = mkdtempSync(join(tmpdir(), 'live-version-'));
  dirs.push(made);
  return made;
};
afterAll(() => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

describe('age', () => {
  it.each([
    [0, '0 s'],
    [42_000, '42 s'],
    [59 * 60_000, '59 min'],
    [3_725_000, '1 h 2 min'],
    [47 * 3_600_000, '47 h 0 min'],
    [3 * 86_400_000, '3 days'],
  ])('%d ms reads %s', (ms, text) => {
    expect(age(ms)).toBe(text);
  });
});

describe('liveVersionCheck', () => {
  it('fails where no version is live, and is skipped where no location was given', async () => {
    const empty = directory();
    const failed = await liveVersionCheck({ uri: empty }, Date.now() + 10_000, () => new Date());
    const skipped = await liveVersionCheck({ skip: 'no location' }, Date.now() + 10_000, () => new Date());

    expect(failed).toMatchObject({ verdict: 'fail', detail: `${empty}: no version is live` });
    expect(skipped).toMatchObject({ verdict: 'skip', detail: 'no location' });
  });

  it('names the live version, how long it has been live and who published it', async () => {
    const out = directory();
    const published = await publishCatalogue({
      store: new DirectoryObjectStore(out),
      snapshot: smallSnapshot(),
      record: { by: 'ops-test', via: 'cli', snapshot: null },
    });
    const later = () => new Date(Date.now() + 3 * 3_600_000);

    const result = await liveVersionCheck({ uri: out }, Date.now() + 10_000, later);

    expect(result.verdict).toBe('pass');
    expect(result.detail).toMatch(
      new RegExp(
        `^${published.version}, live for 3 h 0 min \\(since \\S+Z, published by ops-test \\(cli\\)\\)$`,
      ),
    );
  });
});
