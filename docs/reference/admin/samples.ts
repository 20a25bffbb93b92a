/**
 * The key-administration page's request samples, each a whole program that signs its request with AWS
 * Signature Version 4 (service `lambda`) as a function URL with `AuthType: AWS_IAM` wants it: curl's
 * `--aws-sigv4`, the AWS SDK's own signer in TypeScript (`@smithy/signature-v4`), botocore's `SigV4Auth` in
 * Python (as docs/admin-api.md and docs/examples/admin_client.py do). Each sends what the exchange it is made
 * from sent, to `CATALOGUE_ADMIN_URL`, with the caller's AWS credentials from the environment (the SDKs' usual
 * chain; curl: `AWS_ACCESS_KEY_ID`…) and `AWS_REGION`; a call that takes an Idempotency-Key makes a fresh one.
 * A call that sends a key itself (`{"key": …}`: a key reported leaked, looked up or revoked) takes it from
 * `CATALOGUE_KEY`, never from its own text: a key on a command line is seen by `ps` and kept in a shell's
 * history (curl reads the body from a pipe that the shell's own `printf` writes).
 * Pure: an exchange in, source text out.
 */
import type { ShownExchange } from '../shown.js';

interface Sent {
  method: string;
  /** Path and query under the base URL (`/keys?owner=user_42`). */
  target: string;
  body: unknown;
  idempotent: boolean;
  /** The body is `{"key": …}`: the key comes from CATALOGUE_KEY. */
  keyBody: boolean;
}

function sent(exchange: ShownExchange): Sent {
  const { request } = exchange;
  const body = request.body === undefined ? undefined : (JSON.parse(request.body) as unknown);
  const keys = body && typeof body === 'object' ? Object.keys(body) : [];
  return {
    method: request.method,
    target: request.target.replace(/^\/v1/, ''),
    body,
    idempotent: request.headers['idempotency-key'] !== undefined,
    keyBody: keys.length === 1 && keys[0] === 'key',
  };
}

/**
 * curl (7.75 or newer) signing with the credentials in the environment (`aws configure export-credentials
 * --format env` exports an AWS CLI profile's); the session token's header only when there is one.
 * @example curlSample(exchange) // → 'curl -s "$CATALOGUE_ADMIN_URL/keys?owner=user_42" \\\n  --aws-sigv4 …'
 */
export function curlSample(exchange: ShownExchange): string {
  const { method, target, body, idempotent, keyBody } = sent(exchange);
  const data = () => (keyBody ? '--data-binary @-' : `-d ${shellQuoted(JSON.stringify(body))}`);
  return [
    ...(keyBody ? [`printf '{"key":"%s"}' "$CATALOGUE_KEY" |`] : []),
    `curl -s${method === 'GET' ? '' : ` -X ${method}`} "$CATALOGUE_ADMIN_URL${target}"`,
    '  --aws-sigv4 "aws:amz:$AWS_REGION:lambda"',
    '  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"',
    // The shell's `${…:+…}`: the session token's header only when there is a session token.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template.
    '  ${AWS_SESSION_TOKEN:+-H "x-amz-security-token: $AWS_SESSION_TOKEN"}',
    ...(body === undefined ? [] : ['  -H "Content-Type: application/json"']),
    ...(idempotent ? ['  -H "Idempotency-Key: $(openssl rand -hex 16)"'] : []),
    ...(body === undefined ? [] : [`  ${data()}`]),
  ].join(' \\\n');
}

/**
 * Text as one shell word, in single quotes (a quote inside closes, escapes and reopens them).
 * @example shellQuoted("it's") // → `'it'\''s'`
 */
const shellQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A JSON value as a TypeScript literal (single quotes, bare keys where they can be).
 * @example typescriptLiteral({ owner: 'user_42', expires: null }) // → "{ owner: 'user_42', expires: null }"
 */
function typescriptLiteral(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(typescriptLiteral).join(', ')}]`;
  if (value && typeof value === 'object') {
    const fields = Object.entries(value).map(
      ([key, field]) => `${IDENTIFIER.test(key) ? key : typescriptLiteral(key)}: ${typescriptLiteral(field)}`,
    );
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  return String(value);
}

/**
 * A JSON value as a Python literal.
 * @example pythonLiteral({ expires: null, ok: true }) // → '{"expires": None, "ok": True}'
 */
function pythonLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    const fields = Object.entries(value).map(
      ([key, field]) => `${JSON.stringify(key)}: ${pythonLiteral(field)}`,
    );
    return `{${fields.join(', ')}}`;
  }
  return String(value);
}

/**
 * A Node.js program (ESM, top-level await) signing with the AWS SDK's signer and its credential chain.
 * @example typescriptSample(exchange) // → "import { defaultProvider } from '@aws-sdk/credential-provider-node';\n…"
 */
export function typescriptSample(exchange: ShownExchange): string {
  const { method, target, body, idempotent, keyBody } = sent(exchange);
  const literal = keyBody ? "{ key: process.env['CATALOGUE_KEY'] }" : typescriptLiteral(body);
  const headers = [
    '    host: url.host,',
    ...(body === undefined ? [] : ["    'content-type': 'application/json',"]),
    ...(idempotent ? ["    'idempotency-key': crypto.randomUUID(),"] : []),
  ];
  return [
    "import { defaultProvider } from '@aws-sdk/credential-provider-node';",
    "import { Sha256 } from '@smithy/core/checksum';",
    "import { SignatureV4 } from '@smithy/signature-v4';",
    '',
    '// CATALOGUE_ADMIN_URL: the AdminApiUrl output (npm start prints it);',
    '// credentials: the AWS SDK chain (a role, a profile, AWS_ACCESS_KEY_ID…)',
    `const url = new URL(\`\${process.env['CATALOGUE_ADMIN_URL']}${target}\`);`,
    ...(keyBody ? ["// CATALOGUE_KEY: the key itself (never in a program's text or on a command line)"] : []),
    ...(body === undefined ? [] : [`const body = JSON.stringify(${literal});`]),
    'const signer = new SignatureV4({',
    "  service: 'lambda',",
    "  region: process.env['AWS_REGION'] ?? 'us-east-1',",
    '  credentials: defaultProvider(),',
    '  sha256: Sha256,',
    '});',
    'const signed = await signer.sign({',
    `  method: '${method}',`,
    '  protocol: url.protocol,',
    '  hostname: url.hostname,',
    '  ...(url.port && { port: Number(url.port) }),',
    '  path: url.pathname,',
    '  query: Object.fromEntries(url.searchParams),',
    '  headers: {',
    ...headers,
    '  },',
    ...(body === undefined ? [] : ['  body,']),
    '});',
    'const response = await fetch(url, {',
    `  method: '${method}',`,
    '  headers: signed.headers,',
    ...(body === undefined ? [] : ['  body,']),
    '});',
    'console.log(response.status, await response.json());',
  ].join('\n');
}

/**
 * A Python 3 program signing with botocore's SigV4Auth and its credential chain, sending with the standard
 * library.
 * @example pythonSample(exchange) // → 'import json\nimport os\n…'
 */
export function pythonSample(exchange: ShownExchange): string {
  const { method, target, body, idempotent, keyBody } = sent(exchange);
  const literal = keyBody ? '{"key": os.environ["CATALOGUE_KEY"]}' : pythonLiteral(body);
  const headers = [
    ...(body === undefined ? [] : ['"Content-Type": "application/json"']),
    ...(idempotent ? ['"Idempotency-Key": str(uuid.uuid4())'] : []),
  ];
  return [
    'import json',
    'import os',
    'import urllib.error',
    'import urllib.request',
    ...(idempotent ? ['import uuid'] : []),
    '',
    'from botocore.auth import SigV4Auth',
    'from botocore.awsrequest import AWSRequest',
    'from botocore.session import Session',
    '',
    '# CATALOGUE_ADMIN_URL: the AdminApiUrl output (npm start prints it);',
    "# credentials: botocore's chain (a role, a profile, AWS_ACCESS_KEY_ID…)",
    `url = os.environ["CATALOGUE_ADMIN_URL"] + ${JSON.stringify(target)}`,
    ...(keyBody ? ["# CATALOGUE_KEY: the key itself (never in a program's text or on a command line)"] : []),
    ...(body === undefined ? [] : [`body = json.dumps(${literal}).encode()`]),
    ...(headers.length === 0
      ? ['headers = {}']
      : ['headers = {', ...headers.map((header) => `    ${header},`), '}']),
    `request = AWSRequest(method="${method}", url=url${body === undefined ? '' : ', data=body'}, headers=headers)`,
    'credentials = Session().get_credentials().get_frozen_credentials()',
    'region = os.environ.get("AWS_REGION", "us-east-1")',
    'SigV4Auth(credentials, "lambda", region).add_auth(request)',
    'prepared = request.prepare()',
    'sent = urllib.request.Request(prepared.url, data=prepared.body,',
    '                              method=prepared.method, headers=dict(prepared.headers))',
    'try:',
    '    with urllib.request.urlopen(sent) as answer:',
    '        print(answer.status, json.load(answer))',
    'except urllib.error.HTTPError as refused:',
    '    print(refused.code, json.load(refused))',
  ].join('\n');
}
