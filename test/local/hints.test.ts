import { describe, expect, it } from 'vitest';
import { main as keysCli } from '../../admin/cli.js';
import { localCommandHints, partnerKeyHint, pasteLines, shellWord, uploadHints } from '../../local/hints.js';

const STACK = {
  source: 'fixtures/catalogue',
  s3Endpoint: 'http://127.0.0.1:40001',
  bucket: 'catalogue',
  prefix: '',
};

describe('npm start command hints', () => {
  it('prints the key CLI and the versions commands by name (they find npm start), and a publish, ready to paste', () => {
    expect(localCommandHints(STACK)).toEqual([
      'Keys (issue, list, revoke, id, enable, limits, expire, roll, usage, owner, import): npm run keys -- list',
      'Publish it again after an edit:',
      '  npm run catalogue -- build --source fixtures/catalogue --out s3://catalogue --endpoint http://127.0.0.1:40001',
      'Its versions, and the one before made live again: npm run catalogue -- versions | rollback',
    ]);
  });

  it('serving the repository fixture, it suggests editing a copy, not the tracked files', () => {
    expect(
      localCommandHints({ ...STACK, source: 'my-catalogue', copyFrom: 'fixtures/catalogue' }).slice(1, 4),
    ).toEqual([
      'Publish an edited copy of the catalogue (docs/publishing.md):',
      '  cp -r fixtures/catalogue my-catalogue   # then edit my-catalogue/*.json',
      '  npm run catalogue -- build --source my-catalogue --out s3://catalogue --endpoint http://127.0.0.1:40001',
    ]);
  });

  it('keeps a prefix and quotes what the shell would split', () => {
    const lines = localCommandHints({ ...STACK, prefix: 'catalogue/', source: "../my snapshots/it's" });

    expect(lines[2]).toBe(
      `  npm run catalogue -- build --source '../my snapshots/it'\\''s' --out s3://catalogue/catalogue --endpoint http://127.0.0.1:40001`,
    );
  });

  it('names every key action of npm run keys (but create-tables: npm start has made them)', async () => {
    let help = '';
    await keysCli(['--help'], {}, { out: (text) => (help += `${text}\n`), err: () => {} });
    // A command with two forms (issue, issue --like) has two help lines: named once.
    const commands = [
      ...new Set(
        [...(help.split('Commands:\n')[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map(
          (match) => match[1],
        ),
      ),
    ].filter((command) => command !== 'create-tables');

    expect(commands.length).toBeGreaterThan(5);
    expect(localCommandHints(STACK)[0]).toBe(`Keys (${commands.join(', ')}): npm run keys -- list`);
  });

  it('says how to upload into it: the command, and the AWS CLI with the local S3’s endpoint and credentials', () => {
    expect(
      uploadHints({
        source: 'my catalogue',
        bucket: 'catalogue',
        s3Endpoint: 'http://127.0.0.1:40001',
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      }),
    ).toEqual([
      "  npm run catalogue -- upload 'my catalogue'   # checks, uploads, waits for the report and says the outcome",
      '  or with the AWS CLI (the local S3 takes only its own credentials):',
      "  tar czf snapshot.tar.gz -C 'my catalogue' . && AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER aws s3 cp snapshot.tar.gz s3://catalogue/incoming/$(date -u +%Y%m%dT%H%M%SZ).tar.gz --endpoint-url http://127.0.0.1:40001",
    ]);
  });

  it('prints the exports the guides use, ready to paste', () => {
    expect(
      pasteLines({
        key: 'pk_live_AAAAAAAAAAAAAAAAAAAAAA',
        url: 'http://127.0.0.1:8787/v1',
        s3Endpoint: 'http://127.0.0.1:40001',
      }),
    ).toEqual([
      '  export CATALOGUE_KEY=pk_live_AAAAAAAAAAAAAAAAAAAAAA',
      '  export CATALOGUE_URL=http://127.0.0.1:8787/v1',
      '  export CATALOGUE_S3_ENDPOINT=http://127.0.0.1:40001',
    ]);
  });

  it('says how to get a partner-tier key, one restart away, unless one is seeded already', () => {
    const limits = { minute: 600, month: 1_000_000 };
    const free = { minute: 60, month: 5000 };

    expect(partnerKeyHint({ seeded: 0, limits, key: 'pk_live_PPPPPPPPPPPPPPPPPPPPPP', free })).toEqual([
      'More requests (a partner-tier key, 600/minute and 1000000/month instead of 60 and 5000): restart with',
      '  CATALOGUE_DEV_KEYS=partner:pk_live_PPPPPPPPPPPPPPPPPPPPPP npm start',
    ]);
    expect(partnerKeyHint({ seeded: 1, limits, key: 'pk_live_x', free })).toEqual([
      'Partner-tier key(s) from CATALOGUE_DEV_KEYS: 600/minute and 1000000/month each.',
    ]);
  });

  it.each([
    ['plain/path-1.2', 'plain/path-1.2'],
    ['a b', "'a b'"],
    ['$HOME', "'$HOME'"],
    ["it's", "'it'\\''s'"],
    ['', "''"],
  ])('shellWord(%j) → %s', (value, expected) => {
    expect(shellWord(value)).toBe(expected);
  });
});
