/**
 * The custom URI schemes of the extension's read-only documents, in one place: every content
 * provider is registered under one of these, every URI of such a document is built with one, and the
 * extension-host tests recognise the documents by them. No `vscode` import, so anything can read it.
 */
export const UriSchemes = {
  /** A job's audit log, following new events: `mam-log:/<folder index>/<job id>.log` (jobs/jobLogDocument.ts). */
  jobLog: 'mam-log',
  /** A file as it was in a reviewed snapshot: `mam-snapshot:/<path>?folder=0&loop=l-…&rev=<sha>` (loops/snapshotDocuments.ts). */
  snapshot: 'mam-snapshot',
} as const;
