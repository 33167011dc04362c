/** Worst-case rows of the stats routes (in service-rows.ts' order, between the counters' and the keys'). */
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

const get = (path: string): HttpRequest => ({ method: 'GET', path });
const post = (path: string, body: unknown = {}): HttpRequest => ({ method: 'POST', path, body });

/**
 * A value of wc-ctx/Load recorded in the clock's hour: the rows before move the clock on by hours, and
 * a pair's hash expires on Redis' real clock about an hour after its hour (a reused seeding's too).
 */
async function recordLoad(context: HarnessContext): Promise<void> {
  const { status, body } = await context.send(post('/stats/wc-ctx/Load', { value: 3 }), 'seeder');
  if (status >= 300) throw new Error(`recording wc-ctx/Load: ${status} ${JSON.stringify(body)}`);
}

export const statsRows = (fresh: (attempt: number) => string): WorstRow[] => [
  {
    route: 'POST /stats/{context}/{type}',
    worst: 'a new pair',
    request: (_context, attempt) => post(`/stats/wc-${fresh(attempt)}/Load`, { value: 12.5 }),
    grows: { times: 40 },
  },
  {
    route: 'GET /stats/{context}/{type}',
    worst: 'an hour with a histogram',
    prepare: recordLoad,
    request: () => get('/stats/wc-ctx/Load'),
  },
  { route: 'GET /admin/stats', worst: 'a page of 1 000 pairs', request: () => get('/admin/stats?limit=1000') },
  {
    route: 'GET /admin/stats/slowest',
    worst: 'the longest list',
    request: () => get('/admin/stats/slowest?limit=100'),
  },
];
