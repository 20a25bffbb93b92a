/**
 * The API reference as a web page: `proxy/openapi.json` (its descriptions carry the prose — authentication,
 * paging, caching, rate limits, every error code) rendered by Redocly CLI's `build-docs` (Redoc) into one static
 * page with its scripts and styles inlined — no CDN, no web font, no request but its own — and the OpenAPI
 * document beside it. `npm start` serves both at `/docs` (local/docs.ts), the CDK app deploys them to the bucket
 * behind the distribution's `/docs` behaviours (infra/reference.ts).
 *
 * Never committed: built where it is needed (npm start, the CDK synth, the tests) into a cache keyed by its
 * inputs, `node_modules/.cache/catalogue-reference/<key>/`, so only a changed document or renderer builds again.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

/** The one source of the page. */
export const OPENAPI_DOCUMENT = fileURLToPath(new URL('../../proxy/openapi.json', import.meta.url));
const TEMPLATE = fileURLToPath(new URL('./template.hbs', import.meta.url));
const DEFAULT_CACHE = fileURLToPath(
  new URL('../../node_modules/.cache/catalogue-reference', import.meta.url),
);

/** The files of a built reference, and the paths they are served at (locally and on AWS). */
export const REFERENCE = {
  page: { file: 'index.html', path: '/docs', contentType: 'text/html; charset=utf-8' },
  openapi: {
    file: 'openapi.json',
    path: '/docs/openapi.json',
    contentType: 'application/json; charset=utf-8',
  },
} as const;

/** Bumped whenever what this file does to Redoc's output changes, so that cached builds are rebuilt. */
const RECIPE = '2';

/** Redoc's options: the download button links the served document instead of a copy made inside the page. */
const REDOC_OPTIONS = { downloadUrls: [{ title: 'OpenAPI document', url: REFERENCE.openapi.path }] };

/**
 * Redoc's sidebar credit loads Redocly's logo from their CDN once the page runs. The page must make no request
 * but its own, so the credit shows the name instead (an inline SVG). If a Redoc release stops loading these,
 * the build fails here and this list is updated; the browser test (test/docs/reference.browser.test.ts)
 * catches any other request that leaves the page's origin.
 */
const REMOTE_IMAGES = [
  'https://cdn.redoc.ly/redoc/logo-mini-full.svg',
  'https://cdn.redoc.ly/redoc/logo-mini.svg',
] as const;
const CREDIT_IMAGE =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='52' height='14'%3E%3Ctext x='0' y='11' font-family='sans-serif' font-size='11' fill='%230044D4'%3ERedocly%3C/text%3E%3C/svg%3E";

/** A built reference: its directory (the two files of {@link REFERENCE}) and its Content-Security-Policy. */
export interface ReferenceSite {
  directory: string;
  /** Absolute paths of the page and the document. */
  page: string;
  openapi: string;
  /** What the page needs and nothing more: its own inline scripts (by hash), inline styles, data: images. */
  contentSecurityPolicy: string;
}

/**
 * The security headers of the page and the document, as the distribution sends them (infra/reference.ts uses
 * the API's policy with this CSP): HSTS, nosniff, no framing, no referrer.
 * @example referenceHeaders(site)['x-frame-options'] // → 'DENY'
 */
export function referenceHeaders(site: ReferenceSite): Record<string, string> {
  return {
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy': site.contentSecurityPolicy,
  };
}

/**
 * The CSP of a page: every inline script allowed by its SHA-256 (Redoc's bundle, the document, the colour-mode
 * snippet) and nothing else; styles inline (Redoc's styled-components and style attributes); images from the
 * page itself or data: URLs; no frames, forms, plugins or base URL.
 * @example contentSecurityPolicy('<script>a()</script>') // → "default-src 'none'; script-src 'sha256-…'; …"
 */
export function contentSecurityPolicy(html: string): string {
  const scripts = [...html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/g)];
  if (scripts.some((script) => /\ssrc=/.test(script[1] ?? ''))) {
    throw new Error('the reference page loads a script from a URL; every script must be inline');
  }
  const hashes = scripts.map(
    (script) =>
      `'sha256-${createHash('sha256')
        .update(script[2] ?? '')
        .digest('base64')}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${hashes.join(' ')}`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    // Redoc's icon font, inlined.
    'font-src data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

interface Job {
  directory: string;
  built: boolean;
  /** Node.js arguments of the Redocly CLI call that writes the page into `into`. */
  arguments(into: string): string[];
  /** Post-process `into`, then move it into place. */
  finish(into: string): void;
  env: NodeJS.ProcessEnv;
}

function plan(cacheDirectory: string): Job {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@redocly/cli/package.json');
  const renderer = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const cli = join(dirname(manifest), 'bin/cli.js');
  const openapi = readFileSync(OPENAPI_DOCUMENT);
  const template = readFileSync(TEMPLATE);
  const key = createHash('sha256')
    .update(`${RECIPE}\0${renderer.version}\0${JSON.stringify(REDOC_OPTIONS)}\0`)
    .update(template)
    .update('\0')
    .update(openapi)
    .digest('hex')
    .slice(0, 20);
  const directory = join(cacheDirectory, key);
  return {
    directory,
    built: existsSync(join(directory, REFERENCE.page.file)),
    arguments: (into) => [
      cli,
      'build-docs',
      OPENAPI_DOCUMENT,
      '--inlineBundle',
      `--template=${TEMPLATE}`,
      `--output=${join(into, REFERENCE.page.file)}`,
      `--openapi=${JSON.stringify(REDOC_OPTIONS)}`,
    ],
    // No telemetry from the CLI or the page, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    finish(into) {
      const file = join(into, REFERENCE.page.file);
      let html = readFileSync(file, 'utf8');
      for (const url of REMOTE_IMAGES) {
        if (!html.includes(url)) throw new Error(`Redoc no longer loads ${url}: update REMOTE_IMAGES`);
        html = html.replaceAll(url, CREDIT_IMAGE);
      }
      if (/<link\b[^>]*\bhref=["']?(https?:)?\/\//i.test(html)) {
        throw new Error('the reference page links a remote stylesheet, font or preload');
      }
      contentSecurityPolicy(html);
      writeFileSync(file, html);
      writeFileSync(join(into, REFERENCE.openapi.file), openapi);
      try {
        renameSync(into, directory);
      } catch (error) {
        // Built meanwhile by another process (parallel test workers): theirs is the same.
        if (!existsSync(join(directory, REFERENCE.page.file))) throw error;
        rmSync(into, { recursive: true, force: true });
      }
    },
  };
}

function siteIn(directory: string): ReferenceSite {
  const page = join(directory, REFERENCE.page.file);
  return {
    directory,
    page,
    openapi: join(directory, REFERENCE.openapi.file),
    contentSecurityPolicy: contentSecurityPolicy(readFileSync(page, 'utf8')),
  };
}

function scratchFor(cacheDirectory: string): string {
  mkdirSync(cacheDirectory, { recursive: true });
  return mkdtempSync(join(cacheDirectory, '.building-'));
}

function failed(error: unknown): Error {
  const output = (error as { stderr?: unknown; stdout?: unknown }) ?? {};
  return new Error(
    `building the API reference failed: ${String(output.stderr || output.stdout || error).trim()}`,
    { cause: error },
  );
}

export interface BuildOptions {
  /** @default node_modules/.cache/catalogue-reference */
  cacheDirectory?: string;
}

/**
 * The reference for the current `proxy/openapi.json`: built (a few seconds) unless the cache has it.
 * @example const site = await buildReference(); // site.page ends in /index.html
 */
export async function buildReference(options: BuildOptions = {}): Promise<ReferenceSite> {
  const cacheDirectory = options.cacheDirectory ?? DEFAULT_CACHE;
  const job = plan(cacheDirectory);
  if (!job.built) {
    const into = scratchFor(cacheDirectory);
    try {
      // cwd: an empty directory, so no redocly.yaml of the surroundings changes the output.
      await promisify(execFile)(process.execPath, job.arguments(into), { cwd: into, env: job.env });
      job.finish(into);
    } catch (error) {
      rmSync(into, { recursive: true, force: true });
      throw failed(error);
    }
  }
  return siteIn(job.directory);
}

/**
 * The same, blocking: for the CDK app, whose constructs are synchronous.
 * @example new ReferenceSite(this, 'Reference', { site: buildReferenceSync(), … })
 */
export function buildReferenceSync(options: BuildOptions = {}): ReferenceSite {
  const cacheDirectory = options.cacheDirectory ?? DEFAULT_CACHE;
  const job = plan(cacheDirectory);
  if (!job.built) {
    const into = scratchFor(cacheDirectory);
    try {
      execFileSync(process.execPath, job.arguments(into), { cwd: into, env: job.env, stdio: 'pipe' });
      job.finish(into);
    } catch (error) {
      rmSync(into, { recursive: true, force: true });
      throw failed(error);
    }
  }
  return siteIn(job.directory);
}

// `npm run docs:build`: build (or find) the reference and say where it is.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const site = await buildReference();
  for (const file of [site.page, site.openapi])
    process.stdout.write(`${file} (${statSync(file).size} bytes)\n`);
}
