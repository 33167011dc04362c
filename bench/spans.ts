/**
 * Spans at read time (`?span=`), measured on a 100 000-item board: a one-week window in 1 h slots,
 * every item written once in one of its 168 slots (about 595 slot fields per slot). For spans of 1,
 * 6, 24 and 168 slots: Redis time per call (INFO commandstats, every ranking script or function
 * call) and the read's wall time, next to a top-10 of the whole window in the same run.
 *
 *   npm run bench -- --part spans
 *
 * A private redis-server (harness/redis); nothing else is touched. Not part of `npm test`.
 */
import { loadavg } from 'node:os';
import { SpanTooCostlyError } from '../src/common/errors';
import { SPAN_MAX_FIELDS } from '../src/ranking/core/ranking.limits';
import { FakeClock } from '../harness/clock';
import { startRankingService } from '../harness/ranking';
import { startTestRedis, type TestRedis } from '../harness/redis';
import { scriptCallTime } from './call-rounds';

const ITEMS = 100_000;
const SLOTS = 168;
const T0_MS = 1_700_002_800_000; // an hour boundary
const HOUR_MS = 3_600_000;
const CALLS = 30;

type Started = Awaited<ReturnType<typeof startRankingService>>;

/** The week window with ITEMS items spread over its 168 hourly slots. */
async function fillWeek(ranking: Started['ranking'], clock: FakeClock): Promise<void> {
  await ranking.putBoard({ name: 'spans', windows: [{ name: 'week', period: '7d', interval: '1h' }], shards: 1 });
  for (let slot = 0; slot < SLOTS; slot++) {
    clock.setMs(T0_MS + slot * HOUR_MS);
    const items = Array.from({ length: Math.ceil(ITEMS / SLOTS) }, (_, i) => i * SLOTS + slot).filter((i) => i < ITEMS);
    for (let first = 0; first < items.length; first += 1000)
      await ranking.incrementBatch(
        'spans',
        items.slice(first, first + 1000).map((i) => ({ item: `item-${i}`, amount: 1 + (i % 97) })),
      );
  }
}

/** CALLS top-10 reads over the last `spanSlots` hours (the whole window without): Redis µs and wall ms per read. */
async function spanRow(row: {
  ranking: Started['ranking'];
  redis: TestRedis['client'];
  spanSlots: number | undefined;
}) {
  const { ranking, redis, spanSlots } = row;
  const span = spanSlots === undefined ? undefined : `${spanSlots}h`;
  await redis.config('RESETSTAT');
  let answer = '200';
  const startedMs = performance.now();
  for (let call = 0; call < CALLS; call++) {
    try {
      await ranking.top('spans', 'week', 0, 10, { span });
    } catch (error) {
      if (!(error instanceof SpanTooCostlyError)) throw error;
      answer = `422 SPAN_TOO_COSTLY`;
    }
  }
  const wallMs = (performance.now() - startedMs) / CALLS;
  const { calls, usec } = scriptCallTime(await redis.info('commandstats'));
  const fields = spanSlots === undefined ? '(whole window)' : String(Math.round((ITEMS / SLOTS) * spanSlots));
  const read = span === undefined ? 'top 10 of the 7 d window' : `top 10, span ${span}`;
  console.log(`| ${read} | ${fields} | ${(usec / calls).toFixed(0)} | ${wallMs.toFixed(2)} | ${answer} |`);
}

export async function spansBench(): Promise<void> {
  const redis = await startTestRedis();
  const clock = new FakeClock(T0_MS);
  const { ranking, redisService } = await startRankingService(redis, clock, { QUOTA_NEW_ITEMS: String(ITEMS) });
  try {
    await fillWeek(ranking, clock);
    clock.setMs(T0_MS + (SLOTS - 1) * HOUR_MS + 60_000);
    console.log(`| read | slot fields summed | µs in Redis per call | ms per read (wall) | answer |`);
    console.log(`| --- | --- | --- | --- | --- |`);
    for (const spanSlots of [undefined, 1, 6, 24, 168]) await spanRow({ ranking, redis: redis.client, spanSlots });
    console.log(
      `\nSPAN_MAX_FIELDS ${SPAN_MAX_FIELDS}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await redisService.onApplicationShutdown();
    await redis.stop();
  }
}
