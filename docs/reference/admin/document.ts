/**
 * The OpenAPI document the key-administration page (`/docs/admin`) is rendered from: `admin/openapi.json` (the
 * contract) with, added when the page is built,
 * - what the examples are and which of their values differ on a deployment, then the sections of the guide
 *   (docs/admin-api.md, through prose.ts), so the page and the guide cannot disagree;
 * - one tag, `keys`, for the page's menu;
 * - for every operation signed samples in curl, TypeScript and Python (`x-codeSamples`), real response examples
 *   for every status a request can cause (OpenAPI `examples`), and the real exchange of its first example in
 *   its description — all answered by the admin API over tables of its own (examples.ts, exchanges.ts).
 *
 * Documentation only: nothing here reaches a deployment, and no value of a deployment is on the page.
 * `tsx docs/reference/admin/document.ts <out.json>` writes it (docs/reference/build.ts runs that in its own
 * process).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pageProse } from '../prose.js';
import {
  httpText,
  type PageDocument,
  type PageOperation,
  unfolding,
  withoutUnusedComponents,
  withResponseExamples,
} from '../shown.js';
import { type AdminOperationExamples, adminExamples } from './examples.js';
import { AdminWorld } from './exchanges.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The contract, and the guide whose sections the page carries. */
export const ADMIN_SOURCES = {
  openapi: 'admin/openapi.json',
  prose: ['docs/admin-api.md'],
} as const;

/** The operations of a path item (its own `parameters` are not one). */
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/** The page's one group of operations (Redoc's menu and addresses: `#/keys/<operationId>`). */
const TAG = {
  name: 'keys',
  description: "Issue, list, read, change, roll and revoke an owner's keys, and read their usage.",
};

/**
 * What the examples are, and what a reader's own deployment answers differently: first on the page.
 * @example ABOUT_THE_EXAMPLES.startsWith('## About the examples') // → true
 */
export const ABOUT_THE_EXAMPLES = `## About the examples

Every example on this page is what the admin API answered when the page was built: its own code, over tables of
its own (no deployment's), along one story — user \`user_42\` got a free key and a partner key on 2 December
2025, used the free one on the public API since, and their keys are listed, read, charted, changed, rolled and
revoked on 15 January 2026. Each sample sends the request of its operation's first example, signed with your own
credentials: set \`CATALOGUE_ADMIN_URL\` to the stack's \`AdminApiUrl\` output and \`AWS_REGION\` to its region
(with \`npm start\`: \`export AWS_ACCESS_KEY_ID=$CATALOGUE_ADMIN_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$CATALOGUE_ADMIN_SECRET_ACCESS_KEY AWS_REGION=$CATALOGUE_ADMIN_REGION\` after the lines it
prints). The API reference of the public API is at [/docs](/docs).

**What differs on your deployment**, call by call:

| Value | Here | Yours |
|---|---|---|
| Request id (\`X-Request-Id\`, \`request_id\`) | made of each example's name | new for every call: quote it when you report a problem |
| Key id (\`key_id\`, in paths) | stand-ins, the same at every build | drawn at random when a key is issued |
| Key (\`key\` of issue and roll) | \`pk_live_Example…\`: keys of nothing | a new key, in that one answer only |
| Cursor (\`page.next_cursor\`, \`cursor=\`) | a stand-in | made of your owner's keys: opaque, pass it back as it is |
| Times (\`created\`, \`expires\`, \`effective_by\`, \`last_used\`, \`X-Amz-Date\`) | the story's clock | your clock |
| Usage (\`minute\`, \`month\`, \`months\`) | the story's requests | your users' requests, as the public API counted them |
| Signature (\`Authorization\`) | elided | made by your SDK or curl from your credentials |

Statuses, fields, error codes and messages are what your deployment answers. One answer differs by where the API
runs: an unsigned or wrongly signed request is refused by the function URL itself on AWS, with
\`{"Message":"Forbidden"}\`; \`npm start\` answers the error envelope shown here.`;

/** The description of an operation: its own, then the real exchange of the samples' request. */
function exampleDescription(examples: AdminOperationExamples, own: string | undefined): string {
  const first = examples.success[0]!.exchange;
  const shown = unfolding(
    'Example: the request of the samples, and the status and headers the admin API answered (its body is the first response sample)',
    httpText(first, false),
    false,
  );
  return [own ?? '', shown].filter((part) => part !== '').join('\n\n');
}

function withExamples(
  document: PageDocument,
  operation: PageOperation,
  examples: AdminOperationExamples,
): void {
  operation.tags = [TAG.name];
  operation['x-codeSamples'] = [
    { lang: 'curl', label: 'curl', source: examples.samples.curl },
    { lang: 'TypeScript', label: 'TypeScript', source: examples.samples.typescript },
    { lang: 'Python', label: 'Python', source: examples.samples.python },
  ];
  operation.description = exampleDescription(examples, operation.description);
  withResponseExamples(document, operation, [...examples.success, ...examples.errors], ADMIN_SOURCES.openapi);
}

/** The operations of the contract by operationId (a path's own `parameters` are not one). */
function operationsOf(document: PageDocument): Map<string, PageOperation> {
  const operations = new Map<string, PageOperation>();
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.has(method)) operations.set(operation.operationId, operation);
    }
  }
  return operations;
}

/**
 * The examples of every operation of `document` (the contract), answered by the admin API over tables of its
 * own, started for the call and stopped after it.
 * @example const examples = await adminOperationExamples(contract); examples.get('issue')?.success[0]?.exchange.status // → 201
 */
export async function adminOperationExamples(
  document: PageDocument,
): Promise<Map<string, AdminOperationExamples>> {
  const operations = operationsOf(document);
  const world = await AdminWorld.start();
  try {
    return await adminExamples(
      world,
      (operationId, status) => operations.get(operationId)?.responses[String(status)] !== undefined,
    );
  } finally {
    await world.close();
  }
}

/**
 * The document of the admin page, from the repository's files and the admin API's answers.
 * @example const document = await adminReferenceDocument(); // document.paths['/keys'].post['x-codeSamples'] → [curl, TypeScript, Python]
 */
export async function adminReferenceDocument(): Promise<PageDocument> {
  const document = JSON.parse(await readFile(`${ROOT}${ADMIN_SOURCES.openapi}`, 'utf8')) as PageDocument;
  const pages = await Promise.all(
    ADMIN_SOURCES.prose.map(async (file) => ({ file, markdown: await readFile(`${ROOT}${file}`, 'utf8') })),
  );
  const examples = await adminOperationExamples(document);
  document.info.description = `${document.info.description.trimEnd()}\n\n${ABOUT_THE_EXAMPLES}\n\n${pageProse(pages)}\n`;
  document.tags = [TAG];
  for (const [operationId, operation] of operationsOf(document)) {
    const found = examples.get(operationId);
    if (!found) throw new Error(`${operationId}: no examples (docs/reference/admin/examples.ts)`);
    withExamples(document, operation, found);
  }
  withoutUnusedComponents(document);
  return document;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx docs/reference/admin/document.ts <out.json>');
  await writeFile(out, `${JSON.stringify(await adminReferenceDocument(), null, 2)}\n`);
}
