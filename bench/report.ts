/** What each section hands to RESULTS.md. */

export interface Target {
  name: string;
  target: string;
  measured: string;
  /** undefined: not measured (section skipped or failed). */
  ok: boolean | undefined;
}

export interface SectionResult {
  markdown: string;
  targets: Target[];
  /** Commands run as child processes, for the "exact commands" list. */
  commands: string[];
  /** Figures later sections use (e.g. the proxy's CPU time per request for the cost model). */
  data?: Record<string, number>;
}

export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'not measured' : ok ? 'met' : '**missed**';
}

export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
