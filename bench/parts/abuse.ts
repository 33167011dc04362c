/**
 * Issue #22's hostile-client floods and the worst-case harness (`npm run abuse` runs them all), each
 * against private servers and the built service it starts itself; figures in docs/security.md. A row
 * whose defence did not hold makes the run exit 1.
 */
import type { AbuseRow } from '../abuse/abuse-part';
import type { BenchPart } from './part';

function printRows(part: string, rows: AbuseRow[]): void {
  console.log(`## abuse: ${part}\n`);
  console.log('| attack | measured | held |');
  console.log('| --- | --- | --- |');
  for (const row of rows) console.log(`| ${row.attack} | ${row.measured} | ${row.held ? 'yes' : '**no**'} |`);
  console.log('');
  if (rows.some((row) => !row.held)) process.exitCode = 1;
}

function abusePart(name: string, measures: string, knobs: string[], rows: () => Promise<AbuseRow[]>): BenchPart {
  return {
    name: `abuse-${name}`,
    capability: 'abuse',
    measures,
    knobs,
    run: async () => printRows(name, await rows()),
  };
}

export const ABUSE_PARTS: BenchPart[] = [
  abusePart(
    'budgets',
    'rows 7, 9, 11: costly history reads, Idempotency-Keys, a squatted key',
    ['ABUSE_BUDGETS_ROWS=7'],
    async () => (await import('../abuse/budgets')).budgetsAbuse(),
  ),
  abusePart('edge', 'rows 6, 8, 10, 12–15: the HTTP edge, the key store, scopes', [], async () =>
    (await import('../abuse/edge')).edgeAbuse(),
  ),
  abusePart('exactness', "issue #22's exactness items inside Redis", [], async () =>
    (await import('../abuse/exactness')).exactnessAbuse(),
  ),
  abusePart('growth', 'issue #45 rows 2, 3, 8: writes that grow existing items', [], async () =>
    (await import('../abuse/growth')).growthAbuse(),
  ),
  abusePart('streams', 'rows 1–5 and the HEAD hang: SSE streams and slow clients', [], async () =>
    (await import('../abuse/streams')).streamsAbuse(),
  ),
  abusePart(
    'worst-case',
    "the worst-case harness at full size: every route's costliest use",
    ['WORST_SCALE=full (or ci)', 'BENCH_REDIS_REALTIME=1'],
    async () => (await import('../abuse/worst-case')).worstCaseAbuse(),
  ),
];
