/**
 * What `npm run catalogue -- --help` prints (builder/cli.ts): the usage line and summary each command brings
 * (its entry of the command table) between the lines below, then every option and exit code.
 */
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';

/** A command's part of the help: its usage line(s) and its lines under "Commands:" (either may be empty). */
export interface CommandHelp {
  usage: string;
  summary: string;
}

/** The help, with the commands' parts in the order given. */
export function helpText(commands: readonly CommandHelp[]): string {
  const usages = commands.map((command) => command.usage).join('');
  const summaries = commands.map((command) => command.summary).join('');
  return `${HEAD}${usages}${MIDDLE}${summaries}${TAIL}`;
}

const HEAD = `Catalogue builder: compile a catalogue snapshot into the precomputed objects the API serves.

Usage:
`;

const MIDDLE = `  npm run catalogue -- --help | --version

Commands:
`;

const TAIL = `
Options of build:
  --source DIR         snapshot directory: standards.json, tags.json, manufacturers.json, modules.json
  --out TARGET         a local directory, or s3://bucket/prefix (objects go to <prefix>/o/, the pointer to
                       <prefix>/current.json)
  --endpoint URL       S3-compatible endpoint; AWS when absent. npm start prints its own local one
                       (export CATALOGUE_S3_ENDPOINT=…). Credentials and region come from the usual AWS
                       environment and profiles.
  --dry-run            report what would be added and removed (objects and bytes); write nothing
  --verbose, -v        also list every index key (list variant or detail) whose object changes, and
                       every object uploaded (or, with --dry-run, that would be)
  --retention DUR      how long a superseded version stays readable before collection: 0 or a number with
                       a unit ms, s, m, h or d (default 24h). Open cursors pin a version for this long.
  --concurrency N      uploads in flight (default 16 for a directory, 48 for S3)

Options of versions, rollback and unlock: --out TARGET and --endpoint URL as for build (without --out:
the catalogue of this checkout's running npm start, found as upload finds it), and
  --json               (versions) print the listing as JSON
  --to VERSION         (rollback) the version to make live; default: the one live before the live one
  --force              (unlock) break a lock that looks live

Options of upload (the snapshot folder or .tar.gz is its argument):
  --out s3://BUCKET    the stack's bucket (or its UploadUri output, s3://BUCKET/${UPLOAD_PREFIXES.incomingPrefix}); credentials from
                       the AWS environment: the stack's upload policy (UploadPolicyArn) suffices. Without
                       --out: the npm start of this checkout's data directory (CATALOGUE_LOCAL_DIR, default
                       .local/), its local S3 and credentials, nothing to set
  --endpoint URL       an S3-compatible endpoint for --out
  --name NAME          the upload's name under ${UPLOAD_PREFIXES.incomingPrefix} (letters, digits, ".", "_", "-"; default: the UTC time
                       to the millisecond and the snapshot digest, so that a later upload sorts after)
  --wait DUR           how long to wait for the builder's report (default 15m; units as --retention)
  --json               print the outcome as one JSON object (outcome, exit_code, version, problems, seconds,
                       the builder's report)

Options of failed and retry (retry's NAME is its argument: NAME, NAME.tar.gz or ${UPLOAD_PREFIXES.incomingPrefix}NAME.tar.gz):
  --out s3://BUCKET    as for upload (no --out: this checkout's npm start). failed needs s3:ListBucket on
                       ${UPLOAD_PREFIXES.incomingPrefix} and s3:GetObject on ${UPLOAD_PREFIXES.reportsPrefix}*; retry also s3:GetObject and
                       s3:PutObject on ${UPLOAD_PREFIXES.incomingPrefix}*.tar.gz
  --endpoint URL       an S3-compatible endpoint for --out
  --after DUR          how long an upload may go without a report before it counts as lost (default 1h on
                       the stack: three attempts of up to 15 min and the waits between them; 5m for npm start)
  --force              (retry) retry even while the upload may still be building, or a newer upload came
                       after it (it is then the newest: its catalogue is published over the newer one's)
  --wait DUR, --json   (retry) as for upload; (failed) --json prints the listing as one JSON object

Options of generate:
  --modules N          number of modules (nonnegative integer)
  --seed S             any integer; the same seed gives the same snapshot
  --out DIR            directory to write the four snapshot files to

Examples (docs/publishing.md walks through them):
  cp -r fixtures/catalogue my-catalogue          # then edit my-catalogue/*.json
  npm run catalogue -- validate --source my-catalogue
  npm run catalogue -- build --source my-catalogue --out s3://catalogue --endpoint "$CATALOGUE_S3_ENDPOINT" --dry-run
  npm run catalogue -- build --source my-catalogue --out s3://my-bucket/catalogue
  npm run catalogue -- upload my-catalogue                 # into this checkout's npm start
  npm run catalogue -- upload my-catalogue --out s3://my-bucket --json

Output:
  Progress on stderr: a bar on a terminal, else a line every 5 s (a CI log never looks hung); then one
  summary line on stdout: version, objects added/unchanged/removed, bytes added/removed, version files
  removed, seconds.

Exit codes:
  0  done (for validate: the snapshot is valid)
  1  the snapshot is invalid; every problem is printed on stderr and nothing is written
  2  usage error (unknown command or option, missing or malformed value)
  3  publishing failed (storage unreachable, access denied…); the previous version stays current.
     The message says what to do: run the same build again for a passing fault (network, timeout,
     throttling), or what to fix first (credentials, permissions, bucket, endpoint, server, disk)
  4  another publish holds the target (one publisher at a time); nothing was written. Run it again
     once the other has finished; a publish whose process is gone is taken over at once on the same
     machine, else once its lease has run out (about 90 s after it stopped). A lock that cannot be
     valid is cleared with unlock. (unlock: the lock looks live; nothing was changed)
  5  rollback refused: the version is not retained, or its objects are gone; retry refused: the upload
     is gone or has its final word (or, without --force, may still be building or is older than
     another); nothing was written
  upload: 0 published or unchanged; 1 refused (by the check: nothing was uploaded; or by the builder);
  3 the upload or its publish failed (the live version is unchanged); 6 superseded by a newer upload
  (that one is published instead); 7 no report within --wait (the builder may still be at it)
  retry: as upload, and 5 refused
  failed: 0 no upload failed or went --after without a report; 8 some did (listed); 3 the bucket could
  not be read
`;
