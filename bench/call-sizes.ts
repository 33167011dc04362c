/**
 * Increment calls by size (`HOT_CALL_SIZES=1 npm run bench -- --part hot-path`): after the
 * rounds, one more run of the increment route per server with SLOWLOG logging every command
 * (`slowlog-log-slower-than 0`), then the increment calls it logged grouped by how many requests each
 * carried, with their mean time inside Redis, and a least-squares line through every call: its
 * intercept is a call's fixed part, its slope the part per request, under HTTP load. SLOWLOG times by
 * the wall clock (a preempted call counts its time off the CPU), and logging every command slows Redis
 * for every server alike, so calls gather more requests than in the rounds.
 */
import Redis from 'ioredis';

/** A SLOWLOG entry as Redis answers it: id, start (unix s), duration (µs), the command's arguments. */
export type SlowEntry = [number, number, number, string[]];

const SIZE_BINS = [1, 4, 8, 16, 32, 64, 100];
/** SLOWLOG keeps up to 32 arguments of a command; the last one then says how many more there were. */
const MORE_ARGUMENTS = /^\.\.\. \((\d+) more arguments\)$/;

/**
 * Requests one logged increment call carried: an `EVALSHA` (the hand-rolled script) one; an `FCALL` of
 * the service's increment (src/ranking/writes/scripts/increment.lua: 1 + 2W keys, a header of 7 + 4W
 * arguments whose last is the request stride) its arguments after the header over the stride; anything
 * else undefined.
 */
function requestsOf(args: string[]): number | undefined {
  if (/^evalsha$/i.test(args[0])) return 1;
  if (!/^fcall$/i.test(args[0]) || !/_increment$/.test(args[1])) return undefined;
  const more = MORE_ARGUMENTS.exec(args[args.length - 1]);
  const argc = more ? args.length - 1 + Number(more[1]) : args.length;
  const keyCount = Number(args[2]);
  const windowCount = (keyCount - 1) / 2;
  const headerEnd = 3 + keyCount + 7 + 4 * windowCount;
  const stride = Number(args[headerEnd - 1]);
  return (argc - headerEnd) / stride;
}

/** Slope and intercept of the least-squares line of µs per call against requests per call. */
function fitLine(calls: Array<{ requests: number; micros: number }>): { fixed: number; perRequest: number } {
  const n = calls.length;
  const meanX = calls.reduce((sum, c) => sum + c.requests, 0) / n;
  const meanY = calls.reduce((sum, c) => sum + c.micros, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const c of calls) {
    sxy += (c.requests - meanX) * (c.micros - meanY);
    sxx += (c.requests - meanX) ** 2;
  }
  const perRequest = sxx === 0 ? meanY / meanX : sxy / sxx;
  return { fixed: sxx === 0 ? 0 : meanY - perRequest * meanX, perRequest };
}

/** Runs `load` with every command logged and prints its increment calls by size (see the file's comment). */
export async function callSizes(redis: Redis, server: string, load: () => Promise<unknown>): Promise<void> {
  const [, logged] = (await redis.config('GET', 'slowlog-log-slower-than')) as [string, string];
  await redis.config('SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '1000000');
  await redis.slowlog('RESET');
  try {
    await load();
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', logged);
  }
  const entries = (await redis.slowlog('GET', 1_000_000)) as SlowEntry[];
  await redis.slowlog('RESET');
  const calls = entries.flatMap(([, , micros, args]) => {
    const requests = requestsOf(args);
    return requests === undefined ? [] : [{ requests, micros }];
  });
  if (calls.length === 0) {
    console.log(`| ${server} | 0 | | | | | |`);
    return;
  }
  const bins = SIZE_BINS.map((most, i) => {
    const inBin = calls.filter((c) => c.requests <= most && c.requests > (SIZE_BINS[i - 1] ?? 0));
    const micros = inBin.reduce((sum, c) => sum + c.micros, 0) / Math.max(1, inBin.length);
    return inBin.length === 0 ? '' : `≤ ${most}: ${inBin.length} calls, ${micros.toFixed(0)} µs`;
  });
  const requests = calls.reduce((sum, c) => sum + c.requests, 0);
  const micros = calls.reduce((sum, c) => sum + c.micros, 0);
  const { fixed, perRequest } = fitLine(calls);
  console.log(
    `| ${server} | ${calls.length} | ${(requests / calls.length).toFixed(1)} | ${(micros / requests).toFixed(1)} | ${fixed.toFixed(1)} | ${perRequest.toFixed(1)} | ${bins.filter(Boolean).join('; ')} |`,
  );
}

/** The table's header, printed once before the servers' rows. */
export function callSizesHeader(): void {
  console.log(
    '\n| server | increment calls logged | requests per call | µs per request | fixed µs per call (fit) | µs per request in a call (fit) | calls by requests carried: count, mean µs |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
}
