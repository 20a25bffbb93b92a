/**
 * The one seam into dynalite's and s3rver's insides (src/internals.ts): the installed packages are the pinned
 * releases with everything the extensions reach (so an upgrade that moves or reshapes any of it fails here, and
 * at every start, before a server serves); a changed layout or another version is refused with an error that
 * names the package, the installed and the pinned version, and what is missing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  beforeRouter,
  check,
  checkInstalled,
  type DynaliteModules,
  dynaliteModules,
  dynaliteProblems,
  LayoutError,
  levelMethods,
  PINNED,
  type S3rverModules,
  s3rverModules,
  s3rverProblems,
} from '../src/internals.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** `module` as an object of its own fields, less `without` (a fake of a changed layout). */
const lacking = (module: unknown, ...without: string[]) =>
  Object.fromEntries(Object.entries(module as object).filter(([name]) => !without.includes(name)));

describe('the installed dynalite and s3rver', () => {
  it('are the releases the package pins, and the ones the extensions were written for', () => {
    // An upgrade in package.json alone fails here: the extensions must be checked against it first (README.md).
    expect({ dynalite: manifest.dependencies.dynalite, s3rver: manifest.dependencies.s3rver }).toEqual(
      PINNED,
    );
    expect(dynaliteModules().version).toBe(PINNED.dynalite);
    expect(s3rverModules().version).toBe(PINNED.s3rver);
  });

  it('have every module, function and field the extensions reach', () => {
    expect(dynaliteProblems(dynaliteModules())).toEqual([]);
    expect(s3rverProblems(s3rverModules())).toEqual([]);
    expect(() => checkInstalled('dynalite')).not.toThrow();
    expect(() => checkInstalled('s3rver')).not.toThrow();
  });
});

describe('a changed layout', () => {
  it("of dynalite is named: a store's create, a parser's parse, its LevelDB binding", () => {
    const real = dynaliteModules();
    const changed: DynaliteModules = {
      ...real,
      db: lacking(real.db, 'create'),
      parsers: { ...real.parsers, conditionParser: { parse: 'not a function' } },
      level: {},
    };
    expect(dynaliteProblems(changed)).toEqual([
      'dynalite/db: no function create',
      'dynalite/db/conditionParser: no function parse',
      "dynalite's level: no class Level",
    ]);
    expect(dynaliteProblems({ ...real, db: undefined })).toContain('dynalite/db: no function itemSize');
  });

  it("of s3rver is named: the store's methods, the error class, the kept metadata", () => {
    const real = s3rverModules();
    class Store {
      putObject() {}
    }
    const changed: S3rverModules = { ...real, store: Store, error: undefined, object: {} };
    const problems = s3rverProblems(changed);
    expect(problems).toContain('s3rver/lib/stores/filesystem: no method putPart');
    expect(problems).toContain('s3rver/lib/stores/filesystem: no method getResourcePath');
    expect(problems).not.toContain('s3rver/lib/stores/filesystem: no method putObject');
    expect(problems).toContain('s3rver/lib/models/error: not a class');
    expect(problems).toContain('s3rver/lib/models/object: no ALLOWED_METADATA list');
  });

  it('fails the check with the package, both versions and what is missing', () => {
    const problems = dynaliteProblems({ ...dynaliteModules(), db: {} });
    expect(() => check('dynalite', PINNED.dynalite, problems)).toThrow(LayoutError);
    expect(() => check('dynalite', PINNED.dynalite, problems)).toThrow(
      `@catalogue/local-aws extends dynalite ${PINNED.dynalite}, but dynalite ${PINNED.dynalite} is installed with another layout: dynalite/db: no function create`,
    );
  });

  it('of a store created, or of an s3rver made, is refused before it serves', () => {
    const db = { get() {}, put() {}, del() {}, batch() {} };
    expect(() => levelMethods(db as never)).toThrow(/the store's database: no method get/);
    const app = { middleware: [async () => {}], store: {}, context: { store: {} } };
    expect(() => beforeRouter(app, async () => {})).toThrow(
      /s3rver's last middleware is not its router; an s3rver's store is not its context's/,
    );
  });
});

describe('another version', () => {
  it('is refused, even with the same layout, naming the installed and the pinned one', () => {
    expect(() => check('s3rver', '3.8.0', [])).toThrow(
      `@catalogue/local-aws extends s3rver ${PINNED.s3rver}, but s3rver 3.8.0 is installed: version 3.8.0, not ${PINNED.s3rver}. Install s3rver ${PINNED.s3rver} (npm ci), or check the extensions against s3rver 3.8.0`,
    );
    expect(() => check('dynalite', PINNED.dynalite, [])).not.toThrow();
  });
});
