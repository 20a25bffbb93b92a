/** What `npm run catalogue -- --help` prints: every command, option and exit code (builder/cli.ts). */
export const HELP = `Catalogue builder: compile a catalogue snapshot into the precomputed objects the API serves.

Usage:
  npm run catalogue -- build --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]   (or: publish …)
  npm run catalogue -- repair --source DIR --out DIR|s3://BUCKET[/PREFIX] [options]
  npm run catalogue -- validate --source DIR
  npm run catalogue -- versions --out TARGET [--json]
  npm run catalogue -- rollback --out TARGET [--to VERSION]
  npm run catalogue -- unlock --out TARGET [--force]
  npm run catalogue -- generate --modules N --seed S --out DIR
  npm run catalogue -- --help | --version

Commands:
  build      Validate the snapshot in --source, render every list variant and detail, and publish:
  publish    upload objects that are not there yet, then the version file and log, then the pointer
             (current.json) last, then delete what no retained version references. (publish and
             build are the same command.)
             A small edit is built from the current version's manifest: only the list variants and
             details it changes are rendered and uploaded, and the target is not listed.
  repair     Like build, but list the whole target first: upload every object of this version that is
             missing (a damaged target), and delete every object no retained version references
             (orphans of abandoned publishes, objects of versions published by an older format).
  validate   Check a snapshot and list every problem (file, record id, field, reason). Writes nothing.
             Prints the snapshot's digest, which each version records.
  versions   List the target's retained versions, newest first: id, when it was live, who published it
             (and how: cli, upload, npm start), from which snapshot digest, its counts; * marks the live
             one. --json prints the listing as JSON.
  rollback   Make the previous retained version live again (or --to VERSION, one that versions lists):
             holding the publish lock, check that all its objects are still there, then write its pointer
             copy as the pointer, only over the pointer it read. Nothing is rebuilt; the version it
             replaces stays readable for open cursors until collected.
  unlock     Break the target's publish lock when it cannot be valid (unreadable, a lease impossibly far
             ahead, a directory where the lock belongs) or its publish is gone. Refused while the lock
             looks live (exit 4), unless --force: a publish still holding it then stops before its next
             step, and the live version is never left half-written.
  generate   Write a deterministic synthetic snapshot of N modules (for load tests and benchmarks).

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

Options of versions, rollback and unlock: --out TARGET and --endpoint URL as for build, and
  --json               (versions) print the listing as JSON
  --to VERSION         (rollback) the version to make live; default: the one live before the live one
  --force              (unlock) break a lock that looks live

Options of generate:
  --modules N          number of modules (nonnegative integer)
  --seed S             any integer; the same seed gives the same snapshot
  --out DIR            directory to write the four snapshot files to

Examples (docs/publishing.md walks through them):
  cp -r fixtures/catalogue my-catalogue          # then edit my-catalogue/*.json
  npm run catalogue -- validate --source my-catalogue
  npm run catalogue -- build --source my-catalogue --out s3://catalogue --endpoint "$CATALOGUE_S3_ENDPOINT" --dry-run
  npm run catalogue -- build --source my-catalogue --out s3://my-bucket/catalogue

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
  5  rollback refused: the version is not retained, or its objects are gone; nothing was written
`;
