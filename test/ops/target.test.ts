/**
 * What `npm run smoke` checks, from its options, the `export` lines npm start prints, or a stack's outputs
 * (read here by a stand-in reader; test/ops/smoke.test.ts reads them with the SDK).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STACK_OUTPUTS, smokeTarget } from '../../ops/target.js';

const KEY = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
const OUTPUTS = {
  ApiUrl: 'https://api.example.com/v1',
  ReferenceUrl: 'https://api.example.com/docs',
  AdminApiUrl: 'https://abc123.lambda-url.eu-west-1.on.aws/v1',
  CatalogueUri: 's3://catalogue-bucket/catalogue/',
  Region: 'eu-west-1',
};
const NPM_START = {
  CATALOGUE_URL: 'http://127.0.0.1:8787/v1',
  CATALOGUE_KEY: KEY,
  CATALOGUE_S3_ENDPOINT: 'http://127.0.0.1:4568',
  CATALOGUE_ADMIN_URL: 'http://127.0.0.1:8788/v1',
  CATALOGUE_ADMIN_ACCESS_KEY_ID: 'LOCALAAAAAAAAAAAAAAA',
  CATALOGUE_ADMIN_SECRET_ACCESS_KEY: 's'.repeat(40),
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('smokeTarget', () => {
  it("takes npm start's export lines: the API, its /docs, the key, the admin API with the local credentials", async () => {
    const target = await smokeTarget({ catalogue: 's3://catalogue' }, NPM_START);

    expect(target.api).toEqual({
      api: NPM_START.CATALOGUE_URL,
      docs: 'http://127.0.0.1:8787/docs',
      key: KEY,
    });
    expect(target.catalogue).toEqual({ uri: 's3://catalogue', endpoint: NPM_START.CATALOGUE_S3_ENDPOINT });
    if ('skip' in target.admin || 'unsigned' in target.admin)
      throw new Error('expected a signed admin check');
    expect(target.admin.url).toBe(NPM_START.CATALOGUE_ADMIN_URL);
    expect(await target.admin.credentials()).toEqual({
      accessKeyId: NPM_START.CATALOGUE_ADMIN_ACCESS_KEY_ID,
      secretAccessKey: NPM_START.CATALOGUE_ADMIN_SECRET_ACCESS_KEY,
    });
  });

  it("takes a stack's outputs, CATALOGUE_KEY, and never npm start's S3 for them; the admin API unsigned", async () => {
    const asked: string[] = [];
    const target = await smokeTarget(
      { stack: 'CatalogueReadApi', region: 'eu-west-1' },
      { ...NPM_START, CATALOGUE_URL: undefined },
      {
        readOutputs: async (stack, region) => {
          asked.push(`${stack} ${region}`);
          return OUTPUTS;
        },
        readSecret: () => Promise.reject(new Error('CATALOGUE_KEY is set: no secret to read')),
      },
    );

    expect(asked).toEqual(['CatalogueReadApi eu-west-1']);
    expect(target.api).toEqual({ api: OUTPUTS.ApiUrl, docs: OUTPUTS.ReferenceUrl, key: KEY });
    expect(target.catalogue).toEqual({ uri: OUTPUTS.CatalogueUri, endpoint: undefined });
    // Read access only: the admin API must refuse an unsigned request.
    expect(target.admin).toEqual({ url: OUTPUTS.AdminApiUrl, unsigned: true });
  });

  it("with --stack and no CATALOGUE_KEY, reads the stack's check key from its secret", async () => {
    const read: string[] = [];
    const target = await smokeTarget(
      { stack: 'CatalogueReadApi' },
      {},
      {
        readOutputs: async () => ({
          ...OUTPUTS,
          CheckKeySecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:k',
        }),
        readSecret: async (arn) => {
          read.push(arn);
          return KEY;
        },
      },
    );

    expect(read).toEqual(['arn:aws:secretsmanager:eu-west-1:1:secret:k']);
    expect(target.api.key).toBe(KEY);
    await expect(smokeTarget({ stack: 'Old' }, {}, { readOutputs: async () => OUTPUTS })).rejects.toThrow(
      'a key to read with: CATALOGUE_KEY (the stack Old has no CheckKeySecretArn output)',
    );
  });

  it("with --stack --admin, signs the admin check, in the region its URL names, with the SDK's credentials", async () => {
    // The SDK's credential chain reads this process's environment.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKID');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    const target = await smokeTarget(
      { stack: 'CatalogueReadApi', admin: true },
      { CATALOGUE_KEY: KEY },
      { readOutputs: async () => OUTPUTS },
    );

    if ('skip' in target.admin || 'unsigned' in target.admin)
      throw new Error('expected a signed admin check');
    expect(target.admin).toMatchObject({ url: OUTPUTS.AdminApiUrl, region: 'eu-west-1' });
    // npm start's local credentials are for its loopback admin API only.
    expect((await target.admin.credentials()).accessKeyId).toBe('AKID');
    await expect(
      smokeTarget({ url: 'https://api.example.com/v1', admin: true }, { CATALOGUE_KEY: KEY }),
    ).rejects.toThrow('--admin applies with --stack');
  });

  it('skips the admin API and the live version when nothing names them', async () => {
    const target = await smokeTarget({ url: 'https://api.example.com/v1/' }, { CATALOGUE_KEY: KEY });

    expect(target.api.api).toBe('https://api.example.com/v1');
    expect(target.admin).toEqual({ skip: 'no admin URL (--admin-url, CATALOGUE_ADMIN_URL or --stack)' });
    expect(target.catalogue).toEqual({
      skip: 'no catalogue location (--catalogue s3://bucket/prefix, or --stack)',
    });
  });

  it("refuses a stack without this project's outputs, and URLs with a query or credentials", async () => {
    await expect(
      smokeTarget(
        { stack: 'Other' },
        { CATALOGUE_KEY: KEY },
        { readOutputs: async () => ({ BucketName: 'b' }) },
      ),
    ).rejects.toThrow("--stack Other: no ApiUrl output (is it this project's stack?)");
    await expect(
      smokeTarget({ url: 'https://u:p@api.example.com/v1' }, { CATALOGUE_KEY: KEY }),
    ).rejects.toThrow('no query string or credentials in the URL');
    await expect(smokeTarget({ url: 'not a url' }, { CATALOGUE_KEY: KEY })).rejects.toThrow(
      '--url not a url: not a URL',
    );
  });

  it('reads only outputs that the stack declares', () => {
    const stack = readFileSync(new URL('../../infra/outputs.ts', import.meta.url), 'utf8');

    const watch = readFileSync(new URL('../../infra/watch-outputs.ts', import.meta.url), 'utf8');
    for (const name of STACK_OUTPUTS) {
      expect(`${stack}\n${watch}`).toMatch(new RegExp(`^ {4,6}${name}: \\{`, 'm'));
    }
  });
});
