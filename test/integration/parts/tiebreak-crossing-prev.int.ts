import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A tiebreak board's crossing writes the previous listing's ranks with ZADDs from Lua (issue #45): one,
 * or past 500 rows one a page, into a staged set renamed to the previous listing by the last page.
 * A ZADD creating a sorted set makes it a listpack unless its first member is longer than
 * zset-max-listpack-value, and scans that listpack for each of its first 128 members (0.9 M of the
 * crossing's instructions at 1 000 rows): past 128 rows the first ZADD leads with a member no id can be
 * (control characters, 65 bytes), so the set is a skiplist from its first member, and the last page
 * takes it out. Counted without a clock, from the commands the crossing's scripts ran (SLOWLOG at 0 µs).
 */
const T0 = 1_699_999_980_000; // a minute boundary
const MINUTE_MS = 60_000;
/** More bytes than Redis' default zset-max-listpack-value (64). */
const SKIPLIST_FIRST = '\x1d'.repeat(65);
/** The commands that write a previous listing (a page's read of it runs others). */
const WRITES = new Set(['del', 'unlink', 'zadd', 'zrem', 'zrangestore', 'expire', 'rename']);

describe('the previous listing a tiebreak crossing stores (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  /** A tiebreak board of `items` items keeping snapshots of `top` rows, its crossing's prev commands. */
  async function crossed(board: string, items: number, top: number) {
    const { ranking, node } = own();
    await ranking.putBoard({
      name: board,
      windows: [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top } }],
      aggregate: 'max',
      tiebreak: { order: 'asc' },
    });
    for (let first = 0; first < items; first += 100)
      await Promise.all(
        Array.from({ length: Math.min(100, items - first) }, (_, k) =>
          ranking.score(board, `i${first + k}`, (first + k) % 97, undefined, undefined, undefined, (first + k) % 7),
        ),
      );
    const before = await ranking.top(board, 'w', 0, top);
    clock.advanceMs(MINUTE_MS);
    await logEveryCommand(node);
    const after = await ranking.top(board, 'w', 0, top);
    const commands = (await loggedCalls(node)).flatMap((call) => call.commands);
    await stopLoggingEveryCommand(node);
    const prev = (await node.keys(`*board:${board}}:w:prev`))[0];
    // Its staged pages' set is `${prev}next`; a ZADD's first member, a ZREM's member.
    const onPrev = commands
      .filter((args) => (args[1] === prev || args[1] === `${prev}next`) && WRITES.has(args[0].toLowerCase()))
      .map((args) => {
        const command = args[0].toLowerCase();
        return [command + (args[1] === prev ? '' : ' staged'), command === 'zrem' ? args[2] : args[3]];
      });
    return { before, after, onPrev, encoding: await node.object('ENCODING', prev), size: await node.zcard(prev) };
  }

  it('past 500 rows stages pages in a skiplist from its first member, then takes it out and renames it', async () => {
    const { before, after, onPrev, encoding, size } = await crossed('tbx', 1200, 1000);

    expect(onPrev.map(([command]) => command)).toEqual([
      'unlink staged',
      'zadd staged',
      'expire staged',
      'zadd staged',
      'zrem staged',
      'unlink',
      'rename staged',
      'expire',
    ]);
    expect(onPrev[1][1]).toBe(SKIPLIST_FIRST);
    expect(onPrev[4][1]).toBe(SKIPLIST_FIRST);
    expect(encoding).toBe('skiplist');
    expect(size).toBe(1000);
    expect(after.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
      before.items.map(({ item, rank }) => [item, rank]),
    );
  });

  it('past 128 rows and up to 500 makes prev a skiplist from its first member, then takes it out', async () => {
    const { before, after, onPrev, encoding, size } = await crossed('tbz', 600, 400);

    expect(onPrev.map(([command]) => command)).toEqual(['unlink', 'zadd', 'zrem', 'expire']);
    expect(onPrev[1][1]).toBe(SKIPLIST_FIRST);
    expect(encoding).toBe('skiplist');
    expect(size).toBe(400);
    expect(after.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
      before.items.map(({ item, rank }) => [item, rank]),
    );
  });

  it('keeps a listing of at most 128 rows a listpack, written by one ZADD of its rows', async () => {
    const { before, after, onPrev, encoding, size } = await crossed('tby', 200, 100);

    expect(onPrev.map(([command]) => command)).toEqual(['unlink', 'zadd', 'expire']);
    expect(onPrev[1][1]).not.toBe(SKIPLIST_FIRST);
    expect(encoding).toBe('listpack');
    expect(size).toBe(100);
    expect(after.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
      before.items.map(({ item, rank }) => [item, rank]),
    );
  });
});
