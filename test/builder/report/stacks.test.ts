/**
 * Stacks mapped through a bundle's source map when an error is thrown, not when the bundle loads: a small
 * module and report/stacks.ts bundled here as the stack bundles the upload builder (esbuild, minified ESM,
 * a source map without sources), run by a plain `node` without `--enable-source-maps` (vitest and tsx map
 * stacks themselves, so the bundle runs in a child process).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackMapper } from '../../../builder/report/stacks.js';

const ARCHIVE = `export function readArchive(depth: number): number {
  if (depth > 2) throw new Error('unexpected end of archive', { cause: new Error('truncated') });
  return readArchive(depth + 1);
}
`;
const ENTRY = (stacks: string) => `import { withMappedStacks } from ${JSON.stringify(stacks)};
import { readArchive } from './archive.ts';

export async function raw(event: { depth: number | string }): Promise<number> {
  if (typeof event.depth === 'string') throw event.depth;
  return readArchive(event.depth);
}
export const handler = withMappedStacks(raw, import.meta.url);
`;

let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stacks-'));
  writeFileSync(join(dir, 'archive.ts'), ARCHIVE);
  writeFileSync(
    join(dir, 'entry.ts'),
    ENTRY(new URL('../../../builder/report/stacks.ts', import.meta.url).pathname),
  );
  bundle = join(dir, 'out', 'index.mjs');
  await build({
    entryPoints: [join(dir, 'entry.ts')],
    outfile: bundle,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'silent',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Call `exported` of the bundle in a fresh `node` with `event`; what it threw: its stack, its cause's. */
function thrownBy(exported: 'raw' | 'handler', event: unknown) {
  const script = `
    const module = await import(${JSON.stringify(pathToFileURL(bundle).href)});
    try { await module.${exported}(${JSON.stringify(event)}, {}); console.log('{}'); }
    catch (error) { console.log(JSON.stringify(error instanceof Error ? { stack: error.stack, cause: error.cause?.stack } : { thrown: error })); }`;
  const env = { PATH: process.env.PATH ?? '' };
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { stack?: string; cause?: string; thrown?: unknown };
}

describe('withMappedStacks', () => {
  it("names the sources' files, lines and functions in a thrown error's stack, its cause's too", () => {
    const raw = thrownBy('raw', { depth: 0 });
    expect(raw.stack).toMatch(/at \w+ \(file:\/\/.*out\/index\.mjs:\d+:\d+\)/);

    const mapped = thrownBy('handler', { depth: 0 });

    const frames = mapped.stack!.split('\n');
    expect(frames[0]).toBe('Error: unexpected end of archive');
    expect(frames[1]).toMatch(/^ {4}at readArchive \(.*archive\.ts:2:\d+\)$/);
    expect(frames[2]).toMatch(/^ {4}at readArchive \(.*archive\.ts:3:\d+\)$/);
    expect(mapped.stack).toMatch(/at \w+ \(.*entry\.ts:6:\d+\)/);
    expect(mapped.stack).not.toContain('index.mjs');
    expect(mapped.cause).toMatch(/^Error: truncated\n {4}at .*archive\.ts:2:\d+/);
  });

  it('rethrows what is not an Error as it is', () => {
    expect(thrownBy('handler', { depth: 'a string' })).toEqual({ thrown: 'a string' });
  });
});

describe('stackMapper', () => {
  it('keeps frames outside the bundle, and every frame when the bundle has no map', () => {
    const stack =
      'Error: x\n    at Object.<anonymous> (/var/runtime/index.mjs:10:5)\n    at node:internal/x:1:1';
    expect(stackMapper(pathToFileURL(bundle).href)(stack)).toBe(stack);

    const unmapped = pathToFileURL(join(dir, 'nowhere', 'index.mjs')).href;
    const inIt = `Error: x\n    at e (${unmapped}:1:28)`;
    expect(stackMapper(unmapped)(inIt)).toBe(inIt);
  });

  it('reads the map when a stack first needs it, not when it is made', () => {
    const later = join(dir, 'later');
    mkdirSync(later);
    const url = pathToFileURL(join(later, 'index.mjs')).href;
    const mapStack = stackMapper(url);
    // The map arrives after the mapper was made: one that read it at once would have found none.
    copyFileSync(`${bundle}.map`, join(later, 'index.mjs.map'));
    const { stack } = thrownBy('raw', { depth: 0 });
    const moved = stack!.replaceAll(pathToFileURL(bundle).href, url);

    expect(mapStack(moved)).toMatch(
      /^Error: unexpected end of archive\n {4}at readArchive \(.*archive\.ts:2:\d+\)/,
    );
  });
});
