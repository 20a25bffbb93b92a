/**
 * The bucket's upload folders, at its root beside the published catalogue: where a publisher puts a snapshot
 * archive (`incoming/<name>.tar.gz`) and where the upload builder writes its report (`reports/<name>.json`).
 * Defined here once for every side that names them: the stack's trigger, policies and lifecycle rules
 * (infra/props.ts: pure names, the one file of store/ that infra/ imports), the upload builder's defaults
 * (builder/lambda.ts), `npm run catalogue -- upload` (builder/upload-destination.ts) and `npm start`'s upload
 * loop (local/uploads.ts).
 */
export const UPLOAD_PREFIXES = { incomingPrefix: 'incoming/', reportsPrefix: 'reports/' } as const;
