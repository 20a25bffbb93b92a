/**
 * The OpenAPI document the reference page is rendered from: `proxy/openapi.json` (the contract) with, added
 * when the page is built,
 * - the manual's prose (docs/api.md, the versioning policy, the API changelog: prose.ts), so the page says
 *   everything the manual promises a consumer and the two cannot disagree;
 * - for every operation a curl line and a TypeScript sample (`x-codeSamples`, Redoc's request samples), real
 *   response examples for every status with a body (OpenAPI `examples`: success and every error), and the
 *   real exchange of its first example and of its revalidation (a 304) in its description — all produced by
 *   the proxy from the fixture (examples.ts, exchanges.ts).
 *
 * `tsx docs/reference/document.ts <out.json>` writes it (docs/reference/build.ts runs that in its own process).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type OperationExamples, operationExamples } from './examples.js';
import { EXAMPLE_TIME, fixtureVersion } from './exchanges.js';
import { pageProse } from './prose.js';
import {
  httpText,
  type PageDocument,
  type PageOperation,
  unfolding,
  withoutUnusedComponents,
  withResponseExamples,
} from './shown.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The contract, and the pages whose sections the page carries, in the page's order. */
export const SOURCES = {
  openapi: 'proxy/openapi.json',
  prose: ['docs/api.md', 'docs/versioning.md', 'docs/changelog.md'],
} as const;

type Document = PageDocument & { components: { responses: Record<string, unknown> } };

/**
 * What the examples are, and what a reader's own deployment answers differently: first on the page, before the
 * manual's sections.
 * @example aboutTheExamples('_BKItsyZiIu7TGIQ27u_9w', EXAMPLE_TIME).startsWith('## About the examples') // → true
 */
export function aboutTheExamples(version: string, time: Date): string {
  const moment = `${time.toISOString().slice(0, 10)} ${time.toISOString().slice(11, 19)} UTC`;
  return `## About the examples

Every example on this page is what the API answered when the page was built: the proxy's own code, serving the
fixture catalogue (\`fixtures/catalogue\` of the repository, published as version \`${version}\`) at ${moment},
to a free-tier key. The samples read the base URL and your key from \`CATALOGUE_URL\` and \`CATALOGUE_KEY\`.
Keys themselves are administered through the key-administration API: its page is [/docs/admin](/docs/admin).

**What differs on your deployment**, request by request:

| Value | Here | Yours |
|---|---|---|
| Request id (\`X-Request-Id\`, \`request_id\`) | made of each example's name | new for every request: quote it when you report a problem |
| Cursor (\`page.next_cursor\`, \`cursor=\`) | sealed with this page's own secret, for the fixture's version | sealed with your deployment's secret and pinned to the version it serves: a cursor of this page is \`invalid_parameter\` there |
| ETag (\`ETag\`, \`If-None-Match\`) | of the fixture's answers | of your catalogue's answers: the same only where an answer's bytes are the same |
| Records, catalogue version | the fixture's | your catalogue's |
| Rate limits (\`X-RateLimit-*\`, \`Retry-After\`) | a free key's, at ${moment} | your key's tier and use, at your time |
| Key (\`Authorization\`) | \`pk_live_…\` | yours |

Everything else — statuses, headers, fields, error codes and messages — is what your deployment answers.`;
}

/**
 * The description of an operation: its own, then the real exchanges of its first example (status line and
 * headers; the bodies are the response samples): unfolded for HEAD and OPTIONS, whose answers have no body.
 */
function exampleDescription(examples: OperationExamples, own: string | undefined): string {
  const first = examples.success[0]!.exchange;
  const parts = [
    own ?? '',
    unfolding(
      `Example: the status and headers the API answered to the samples' request (the fixture catalogue, when this page was built)`,
      httpText(first, false),
      first.body === undefined,
    ),
  ];
  if (examples.notModified) {
    parts.push(
      unfolding(
        'Example: asked again with its <code>ETag</code> in <code>If-None-Match</code> (the client does it for you), while the data has not changed',
        httpText(examples.notModified, false),
        false,
      ),
    );
  }
  return parts.filter((part) => part !== '').join('\n\n');
}

/** The operation with its samples, examples and example exchanges. */
function withExamples(document: Document, operation: PageOperation, examples: OperationExamples): void {
  const { code, prints } = examples.typescript;
  operation['x-codeSamples'] = [
    { lang: 'curl', label: 'curl', source: examples.curl },
    {
      lang: 'TypeScript',
      label: 'TypeScript',
      source: `${code}\n${prints.map((printed) => `// ${printed}`).join('\n')}`,
    },
  ];
  operation.description = exampleDescription(examples, operation.description);
  withResponseExamples(document, operation, [...examples.success, ...examples.errors], SOURCES.openapi);
}

/**
 * The document of the page, from the repository's files and the proxy's answers.
 * @example const document = await referenceDocument(); // document.paths['/tags'].get['x-codeSamples'] → [curl, TypeScript]
 */
export async function referenceDocument(): Promise<Document> {
  const document = JSON.parse(await readFile(`${ROOT}${SOURCES.openapi}`, 'utf8')) as Document;
  const pages = await Promise.all(
    SOURCES.prose.map(async (file) => ({ file, markdown: await readFile(`${ROOT}${file}`, 'utf8') })),
  );
  const about = aboutTheExamples(await fixtureVersion(), EXAMPLE_TIME);
  document.info.description = `${document.info.description.trimEnd()}\n\n${about}\n\n${pageProse(pages)}\n`;
  const examples = await operationExamples(document);
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const found = examples.get(operation.operationId);
      if (!found) throw new Error(`${operation.operationId}: no examples`);
      withExamples(document, operation, found);
    }
  }
  withoutUnusedComponents(document);
  return document;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx docs/reference/document.ts <out.json>');
  await writeFile(out, `${JSON.stringify(await referenceDocument(), null, 2)}\n`);
}
