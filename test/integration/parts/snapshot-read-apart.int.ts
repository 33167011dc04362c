import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';

/**
 * The first read after a snapshot boundary stores the window's listing and reads its page in separate
 * calls (issue #45): a page of 1 000 rows in the call that stored a listing of 1 000 rows made that
 * call the longest of the read (7 ms at the moderation maxima, `ties: first`). Counted without a clock:
 * the call that stores the snapshot reads no range of rows but the listing it stores, and the listing
 * reaches the previous listing inside Redis (ZRANGESTORE), not through Lua. Every row's previousRank is
 * still its rank at the boundary.
 */
const T0 = 1_699_999_980_000; // a minute boundary
const MINUTE_MS = 60_000;
const ITEMS = 1000;
const WINDOWS = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: 1000 } }];
/** Commands that read a range of rows out of a sorted set. */
const RANGE_READS = new Set(['zrange', 'zrevrange', 'zrangebyscore', 'zrevrangebyscore']);
/** The window's listings a page reads rows of: its results, strict order and previous listing. */
const LISTING_KEY = /:(top|order|prev)$/;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
/** The commands of one FCALL, oldest first, by name and first key. */
type Call = Array<{ command: string; key: string }>;
/** The address SLOWLOG gives the commands a script runs. */
const SCRIPT_CLIENT = '?:0';

describe.each(['shared', 'first'] as const)('a read storing a snapshot (single, ties %s)', (ties) => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every call it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  /** Every FCALL Redis ran since the last reset, each with the commands its script ran. */
  async function fcallsRun(): Promise<Call[]> {
    const entries = (await own().node.slowlog('GET', 100_000)) as SlowlogEntry[];
    const calls: Call[] = [];
    let inCall: Call = [];
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of entries.reverse()) {
      const command = String(args[0]).toLowerCase();
      if (client === SCRIPT_CLIENT) inCall.push({ command, key: String(args[1]) });
      else if (command.startsWith('fcall')) calls.push(inCall);
      if (client !== SCRIPT_CLIENT) inCall = [];
    }
    return calls;
  }

  it('stores the listing in one call and reads the page in the next, each rank kept', async () => {
    const board = `apart-${ties}`;
    await own().ranking.putBoard({ name: board, windows: WINDOWS, ties });
    for (let first = 0; first < ITEMS; first += 100) {
      const entries = Array.from({ length: 100 }, (_, k) => ({
        item: `i${first + k}`,
        amount: 1 + ((first + k) % 400),
      }));
      await own().ranking.incrementBatch(board, entries);
    }
    const before = await own().ranking.top(board, 'w', 0, ITEMS);
    clock.advanceMs(MINUTE_MS);
    await own().node.config('SET', 'slowlog-log-slower-than', '0');
    await own().node.config('SET', 'slowlog-max-len', '100000');
    await own().node.slowlog('RESET');
    const after = await own().ranking.top(board, 'w', 0, ITEMS);
    const calls = await fcallsRun();
    await own().node.config('SET', 'slowlog-log-slower-than', '10000');

    const storing = calls.filter((call) => call.some(({ command }) => command === 'zrangestore'));
    expect(storing).toHaveLength(1);
    // The listing stored is its one range read: the page is left to a call of its own.
    expect(storing[0].filter(({ command, key }) => RANGE_READS.has(command) && LISTING_KEY.test(key))).toHaveLength(1);
    expect(storing[0].filter(({ command, key }) => command === 'zadd' && key.endsWith('prev'))).toHaveLength(0);
    expect(calls).toHaveLength(2);
    expect(after.items).toHaveLength(ITEMS);
    expect(after.items.map(({ item, score, rank }) => [item, score, rank])).toEqual(
      before.items.map(({ item, score, rank }) => [item, score, rank]),
    );
    // A previous listing ranks by score alone (competition ranks), whatever the board's ties.
    const scores = before.items.map(({ score }) => score);
    const competition = scores.map((score) => 1 + scores.filter((other) => other > score).length);
    expect(after.items.map(({ previousRank }) => previousRank)).toEqual(competition);
  });
});
