/** Load runs shared by the bench parts: autocannon against a server, and the figures they print. */
import autocannon from 'autocannon';
import { randomInt, randomUUID } from 'node:crypto';
import { cpuSeconds } from './process-stats';

export const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);

export interface RunFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Requests answered with a 2xx status. */
  ok: number;
  /** CPU time (user + system) the server process spent per answered request, µs. */
  cpuMicrosPerRequest: number;
}

export interface CannonRoute {
  method: 'GET' | 'POST';
  /** `[<item>]` in it becomes seed-<random below randomItems> per request when randomItems is set. */
  path: string;
  body?: string;
  idempotencyKeys?: boolean;
  randomItems?: number;
}

/** Per request, a fresh idempotency key and a random item where the route asks for them. */
function setupRequests(route: CannonRoute): autocannon.Request[] | undefined {
  if (!route.idempotencyKeys && !route.randomItems) return undefined;
  return [
    {
      setupRequest: (request) => ({
        ...request,
        // A fresh key per request: every write is stored, none replayed.
        headers: route.idempotencyKeys ? { ...request.headers, 'idempotency-key': randomUUID() } : request.headers,
        path: route.randomItems ? route.path.replace('[<item>]', `seed-${randomInt(route.randomItems)}`) : request.path,
      }),
    },
  ];
}

/** One autocannon run; `serverPid` is the process whose CPU time is read before and after. */
export function cannon(
  baseUrl: string,
  route: CannonRoute,
  serverPid: number | undefined,
  durationSec = DURATION_SEC,
  connections = 50,
): Promise<RunFigures> {
  const cpuBefore = cpuSeconds(serverPid);
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${baseUrl}${route.path}`,
        method: route.method,
        body: route.body,
        headers: route.body ? { 'content-type': 'application/json' } : {},
        requests: setupRequests(route),
        connections,
        duration: durationSec,
        idReplacement: true,
      },
      (error, result) => {
        if (error) return reject(error);
        const cpuMicrosPerRequest = ((cpuSeconds(serverPid) - cpuBefore) * 1e6) / Math.max(1, result.requests.total);
        resolve({
          reqPerSec: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          non2xx: result.non2xx,
          ok: result['2xx'],
          cpuMicrosPerRequest,
        });
      },
    );
  });
}

export function summarize(runs: RunFigures[]): { best: RunFigures; median: RunFigures } {
  const sorted = [...runs].sort((a, b) => b.reqPerSec - a.reqPerSec);
  return { best: sorted[0], median: sorted[Math.floor(sorted.length / 2)] };
}

/**
 * Each service run is followed at once by a bare run; the ratio of each such pair shares the machine's
 * state of that moment, so the median of the pairs' ratios follows the VM's drift less than a ratio of
 * medians taken minutes apart.
 */
export function pairedRatio(serviceRuns: RunFigures[], bareRuns: RunFigures[]): number {
  return median(serviceRuns.map((run, i) => run.reqPerSec / bareRuns[i].reqPerSec));
}

export function medianOf<T>(runs: T[], figure: (run: T) => number): number {
  return median(runs.map(figure));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en');
}

/** Calls per second of `call` kept `inFlight` at a time for `durationSec`. */
export async function throughput(call: () => Promise<unknown>, durationSec: number, inFlight = 64): Promise<number> {
  const endMs = performance.now() + durationSec * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < endMs) {
      await call();
      done++;
    }
  };
  const startedMs = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return done / ((performance.now() - startedMs) / 1000);
}
