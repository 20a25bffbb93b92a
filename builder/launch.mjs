/**
 * `npm run catalogue`: the builder's CLI (builder/cli.ts) run from a bundle that esbuild keeps in
 * .local/cli/, rebuilt whenever one of its sources is newer than the bundle.
 *
 * Loading the TypeScript through tsx costs about 0.16 s of every command (its loader thread and a round trip
 * per module): a tenth of a one-module publish at 25,000 modules. The bundle loads in about 10 ms, and
 * rebuilding it takes about 0.1 s. Packages stay in node_modules (not bundled) and dynamic imports stay
 * lazy chunks, so the AWS SDK is still loaded only for s3:// targets. This file is plain JavaScript so that
 * Node runs it without a loader.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, '.local', 'cli');
/** How long an older bundle is kept after a newer one is built. */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** Names the bundle in use: { dir, builtAtMs, inputs }. */
const CURRENT = join(CACHE, 'current.json');

/** CURRENT's { dir, fingerprint } when none of the bundle's inputs changed since it was built. */
async function freshBundle() {
  let current;
  try {
    current = JSON.parse(await readFile(CURRENT, 'utf8'));
  } catch {
    return undefined;
  }
  try {
    const mtimes = await Promise.all(
      [...current.inputs, 'package-lock.json', 'tsconfig.json'].map(
        async (input) => (await stat(join(ROOT, input))).mtimeMs,
      ),
    );
    if (mtimes.some((mtime) => mtime >= current.builtAtMs) || !current.fingerprint) return undefined;
    await stat(join(CACHE, current.dir, 'cli.js'));
    return current;
  } catch {
    return undefined; // a source was removed or the bundle is gone: rebuild
  }
}

/** Bundle builder/cli.ts into a new directory, then name it in CURRENT (a rename: readers see one or the other). */
async function rebuild() {
  const { build } = await import('esbuild');
  // Taken before the sources are read: an edit made during the build triggers the next rebuild.
  const builtAtMs = Date.now();
  const dir = `bundle-${builtAtMs}-${process.pid}`;
  await mkdir(CACHE, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['builder/cli.ts'],
    outdir: join(CACHE, dir),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
    tsconfig: join(ROOT, 'tsconfig.json'),
  });
  const inputs = Object.keys(result.metafile.inputs).map((input) => relative(ROOT, join(ROOT, input)));
  // The builder's fingerprint: its code as bundled and the exact packages it loads (builder/publish/reuse.ts).
  const hash = createHash('sha256');
  for (const output of Object.keys(result.metafile.outputs).sort()) {
    hash
      .update(`${relative(join(CACHE, dir), join(ROOT, output))}\0`)
      .update(await readFile(join(ROOT, output)));
  }
  hash.update(await readFile(join(ROOT, 'package-lock.json')));
  const fingerprint = hash.digest('base64url').slice(0, 22);
  const temporary = `${CURRENT}.${process.pid}`;
  await writeFile(temporary, JSON.stringify({ dir, builtAtMs, inputs, fingerprint }));
  await rename(temporary, CURRENT);
  // Bundles a day old are removed: a command still running from one may yet load a lazy chunk of it.
  for (const entry of await readdir(CACHE)) {
    const built = Number(/^bundle-(\d+)-/.exec(entry)?.[1]);
    if (entry !== dir && built < builtAtMs - KEEP_MS)
      await rm(join(CACHE, entry), { recursive: true, force: true });
  }
  return { dir, fingerprint };
}

const { dir, fingerprint } = (await freshBundle()) ?? (await rebuild());
process.setSourceMapsEnabled(true);
const { runCommand } = await import(pathToFileURL(join(CACHE, dir, 'cli.js')).href);
// The same bundle under another Node.js may serialise differently: the builder is both.
await runCommand(process.argv.slice(2), { builder: `${fingerprint}/${process.version}`, root: ROOT });
