import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { argumentsOf } from '../../support/slowlog';

/**
 * The first read after a snapshot boundary stores the window's listing and reads its page in separate
 * calls (issue #45): a page of 1 000 rows in the call that stored a listing of 1 000 rows made that
 * call the longest of the read (7 ms at the moderation maxima, `ties: first`). A listing of 1 000 rows is
 * stored in pages of at most 500 rows, one a call (snapshot_rows_lib's PAGED: 8.3–9 M instructions in one
 * call at full size, 10.9 ms once). Counted without a clock: each call that stores a page reads no range
 * of rows but its page of the listing, and stages no more scores for the previous listing than its
 * page's rows (renamed to the previous listing by the last). Every row's previousRank is still its rank
 * at the boundary.
 */
const T0 = 1_699_999_980_000; // a minute boundary
const MINUTE_MS = 60_000;
const ITEMS = 1000;
const PAGE_ROWS = 500;
/** The rows of each page of the listing, in the order they are stored. */
const PAGES = Array.from({ length: Math.ceil(ITEMS / PAGE_ROWS) }, (_, k) =>
  Math.min(PAGE_ROWS, ITEMS - k * PAGE_ROWS),
);
const WINDOWS = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: 1000 } }];
/** Commands that read a range of rows out of a sorted set. */
const RANGE_READS = new Set(['zrange', 'zrevrange', 'zrangebyscore', 'zrevrangebyscore']);
/** The window's listings a page reads rows of: its results, strict order and previous listing. */
const LISTING_KEY = /:(top|order|prev)$/;
/** The previous listing's pages staged by a crossing (snapshot_rows_lib's PAGED). */
const STAGED = /:prevnext$/;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
/** The commands of one FCALL, oldest first, by name, first key and the rest of the arguments. */
type Call = Array<{ command: string; key: string; args: string[] }>;
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
      if (client === SCRIPT_CLIENT) inCall.push({ command, key: String(args[1]), args });
      else if (command.startsWith('fcall')) calls.push(inCall);
      if (client !== SCRIPT_CLIENT) inCall = [];
    }
    return calls;
  }

  it('stores the listing in pages of 500 rows, a call each, and reads the page in the next, each rank kept', async () => {
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

    const storing = calls.filter((call) => call.some(({ command, key }) => command === 'zadd' && STAGED.test(key)));
    expect(storing).toHaveLength(PAGES.length);
    storing.forEach((call, page) => {
      // The page stored is its one range read (positions first..last): the read's page is left to a call of its own.
      const ranges = call.filter(({ command, key }) => RANGE_READS.has(command) && LISTING_KEY.test(key));
      expect(ranges.map(({ args: [, , first, last] }) => Number(last) - Number(first) + 1)).toEqual([PAGES[page]]);
      // Its rows' scores staged for the previous listing, the first page's led by the boundary the pages belong to.
      const staged = call.filter(({ command, key }) => command === 'zadd' && STAGED.test(key));
      expect(staged.map(({ args }) => (argumentsOf(args) - 2) / 2)).toEqual([PAGES[page] + (page === 0 ? 1 : 0)]);
    });
    expect(calls).toHaveLength(PAGES.length + 1);
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
