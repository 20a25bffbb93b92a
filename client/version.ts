/**
 * The package's version and the `User-Agent` it sends, both read from client/package.json when the package is
 * built (the bundler keeps the two fields, nothing else of the manifest), so the version is written in one place.
 */
import manifest from './package.json' with { type: 'json' };

/** This package's version, e.g. `0.3.0`. */
export const VERSION: string = manifest.version;

/** The product token of the `User-Agent`: the package's name without the scope's `@` and `/`. */
const PRODUCT = manifest.name.replace(/^@/, '').replace('/', '-');

/** What the runtime tells of itself, read defensively (a browser has none of it; Deno may forbid env reads). */
export interface RuntimeGlobals {
  process?: { versions?: { node?: string; bun?: string } };
  Deno?: { version?: { deno?: string } };
}

/**
 * The runtime's product token: `node/<version>`, `bun/<version>` or `deno/<version>`; `undefined` elsewhere
 * (a browser, a worker), where the runtime sends its own `User-Agent`.
 * @example runtimeOf(globalThis) // → 'node/24.11.1'
 */
export function runtimeOf(globals: RuntimeGlobals): string | undefined {
  const deno = globals.Deno?.version?.deno;
  if (typeof deno === 'string') return `deno/${deno}`;
  const versions = globals.process?.versions;
  if (typeof versions?.bun === 'string') return `bun/${versions.bun}`;
  if (typeof versions?.node === 'string') return `node/${versions.node}`;
  return undefined;
}

/**
 * The `User-Agent` the client sends, or `undefined` where it does not set one: in a browser, which sends its own
 * (Chrome ignores a script's, and Firefox would ask the API for a CORS preflight that allows it) and in an
 * unknown runtime.
 * @example userAgentOf(globalThis) // → 'catalogue-read-api-client/0.3.0 node/24.11.1'
 */
export function userAgentOf(globals: RuntimeGlobals): string | undefined {
  const runtime = runtimeOf(globals);
  return runtime === undefined ? undefined : `${PRODUCT}/${VERSION} ${runtime}`;
}
