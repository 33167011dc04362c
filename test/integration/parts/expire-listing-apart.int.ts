import { FakeClock } from '../../../harness/clock';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { useIdleExpirer } from '../../support/ranking-graph';
import { type LoggedCall, argumentsOf, drainedFields } from '../../support/slowlog';

const T0 = 1_700_000_000_000;
/** Past half a call's listing rows (snapshot_lib ROWS_PER_CALL): each listing a call of its own. */
const ITEMS = 600;
const SEGMENTS = ['x0', 'x1', 'x2'];
const IDLE_MS = 14 * 86_400_000;
const MOST_PASSES = 50;
/** snapshot_lib's READ_APART_ROWS: a listing of more rows is a call of its own. */
const READ_APART_ROWS = 100;

/**
 * The rows a call stored as listings: each listing's previous ranks copied by ZRANGESTORE <prev> <top> 0 <last>, or a
 * page of a listing of more than 500 rows ZADDed to <prev>next (score, item each; the first page leads with one more).
 */
const listedRows = ({ commands }: LoggedCall) =>
  commands.reduce((rows, args) => {
    const [name, key, , first, last] = args;
    if (name.toLowerCase() === 'zrangestore') return rows + Number(last) - Number(first) + 1;
    if (name.toLowerCase() === 'zadd' && key.endsWith(':prevnext')) return rows + (argumentsOf(args) - 2) / 2;
    return rows;
  }, 0);

/**
 * The previous listings a call's ZRANGESTOREs replace that it had not UNLINKed first (a DEL or the
 * ZRANGESTORE itself frees a listing of 1 000 rows in the call: ~0.5 M instructions, issue #45).
 */
const replacedInCall = ({ commands }: LoggedCall) =>
  commands
    .map(([name, key], at) => ({ name: name.toLowerCase(), key, at }))
    .filter(({ name }) => name === 'zrangestore')
    .filter(
      ({ key, at }) => !commands.slice(0, at).some(([name, unlinked]) => /^unlink$/i.test(name) && unlinked === key),
    )
    .map(({ key }) => key);

/**
 * The scheduler's expiry of a board keeping snapshots, with segments, after idle weeks (issue #45, the
 * harness's `JOB ranking-expiry` row on wc-cross): a listing of 1 000 rows costs some 8-9 M Redis
 * instructions and a drain of an expire call's units about 5 M (bench/expire-instructions.ts). The call
 * that stored a segment's last listing went on to drain that segment's windows (18 M, ~7 ms: every
 * 8th call over wc-cross's segments). Now a listing of many rows is the only work of its call: no call
 * both stores one and drains an expired field, and the board still drains to the end.
 */
describe('the expire calls of a board keeping snapshots of its segments, after idle weeks (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const { expirer, expirePasses } = useIdleExpirer(clock, IDLE_MS, async (graph) => {
    const { ranking } = graph;
    const windows = ['1h', '2h'].map((period, w) => ({
      name: `x${w + 1}`,
      period,
      interval: '1m',
      snapshots: { keep: 2, top: 1000 },
    }));
    await ranking.putBoard({ name: 'cross', windows, segmentsMax: 100 });
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: ITEMS - n, segments: SEGMENTS }));
    await ranking.incrementBatch(commands.batch({ board: 'cross', entries }));
    // A boundary crossed by a write naming the segments: every window's mark set, their listings next.
    clock.advanceMs(60_000);
    await ranking.incrementBatch(
      commands.batch({ board: 'cross', entries: [{ item: 'i1', amount: 1, segments: SEGMENTS }] }),
    );
  });

  it('stores no listing of many rows in a call that drains, and drains the board to the end', async () => {
    const { calls, passes } = await expirePasses(MOST_PASSES);
    expect(passes).toBeLessThan(MOST_PASSES);
    // Every window's listing of the board and of each segment was stored, each first page in a call of its own.
    const listing = calls.filter((call) => listedRows(call) > READ_APART_ROWS);
    expect(listing).toHaveLength(2 * (1 + SEGMENTS.length));
    // Before: the call storing a segment's last listing drained 72 fields of it too.
    expect(listing.map(drainedFields)).toEqual(listing.map(() => 0));
    // The listing each replaced is freed off the call (UNLINK first), not by its ZRANGESTORE.
    expect(listing.flatMap(replacedInCall)).toEqual([]);
    expect(Math.max(...calls.map(drainedFields))).toBeGreaterThan(0);
    const { ranking } = expirer();
    expect((await ranking.top('cross', 'x2', 0, 10)).items).toEqual([]);
    for (const segment of SEGMENTS) expect((await ranking.top('cross', 'x2', 0, 10, { segment })).items).toEqual([]);
  }, 120_000);
});
