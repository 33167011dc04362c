import type { Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';
import { useRankingGraph } from '../../support/ranking-graph';

const T0 = 1_600_000_000_000;
const GROUPS = 300;
/** Commands a group_history_retract call runs besides the listing's own rows: its record, cursors, snapshot. */
const CALL_COMMANDS = 40;

/**
 * Issue #45: an item retraction rewrites a group board's newest merged listing on shard 0
 * (group_history_retract) and its previous ranks by the retracted group's row alone, not a command per
 * row of the listing (a listing of 1 000 groups was 1 000 ZADDs, 13.6 M instructions). Counted without a
 * clock, from the commands each call's script ran (SLOWLOG at 0 µs). GROUPS groups of one member each
 * over a member board of 2 shards; the best group's member retracted: its group leaves the listing, and
 * every other group's previous rank moves up one.
 */
describe('the commands of a group listing rewritten by an item retraction (single)', () => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph('single', clock, {});
  const node = () => world.redis.client as Redis;

  /** GROUPS one-member groups on `hm` (2 shards), their newest listing merged and kept by a history read. */
  async function listed(hm: string, hg: string): Promise<void> {
    const { ranking, groupBoards } = world.graph;
    const snapshots = { keep: 2, top: 1000 };
    await ranking.putBoard({ name: hm, windows: [{ name: 'w', period: 60, interval: 20, snapshots }], shards: 2 });
    await ranking.putBoard({ name: hg, groupOf: { board: hm, window: 'w', top: 1, decay: 1 } });
    for (let g = 0; g < GROUPS; g++) await groupBoards.setMember({ name: hg, group: `g${g}`, item: `p${g}` });
    const entries = Array.from({ length: GROUPS }, (_, g) => ({ item: `p${g}`, amount: GROUPS - g }));
    await ranking.incrementBatch(hm, entries);
    clock.advanceMs(20_000);
    await ranking.history(hg, undefined, undefined);
  }

  it('rewrites the previous ranks by the retracted row alone, within CALL_COMMANDS a call', async () => {
    const { ranking, retractions } = world.graph;
    await listed('hm', 'hg');

    await logEveryCommand(node());
    const started = (await retractions.start('hm', { kind: 'item', id: 'p0' })).body;
    await retractions.settled('hm', started.id);
    const calls = (await loggedCalls(node())).filter(({ call }) => /_group_history_retract$/.test(String(call[1])));
    await stopLoggingEveryCommand(node());

    expect(calls.length).toBeGreaterThan(0);
    for (const { commands } of calls) expect(commands.length).toBeLessThanOrEqual(CALL_COMMANDS);
    const kept = await ranking.history('hg', undefined, undefined);
    expect(kept.items.map(({ item, rank }) => [item, rank])).toEqual(
      Array.from({ length: GROUPS - 1 }, (_, n) => [`g${n + 1}`, n + 1]),
    );
    const top = await ranking.top('hg', undefined, 0, GROUPS);
    expect(top.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
      Array.from({ length: GROUPS - 1 }, (_, n) => [`g${n + 1}`, n + 1]),
    );
  });

  it('writes the previous ranks again from the listing when they no longer match it', async () => {
    const { ranking, retractions } = world.graph;
    await listed('pm', 'pg');
    // The group board's listings live on the member board's first shard, under `<window>%<group board>`.
    const [prev] = await node().keys('*board:pm}:w%pg:prev');
    expect(await node().zcard(prev)).toBe(GROUPS);
    // A previous-ranks set one row short of the listing (as a writer cut short would leave it).
    await node().zrem(prev, `g${GROUPS - 1}`);

    const started = (await retractions.start('pm', { kind: 'item', id: 'p0' })).body;
    await retractions.settled('pm', started.id);
    const top = await ranking.top('pg', undefined, 0, GROUPS);
    expect(top.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
      Array.from({ length: GROUPS - 1 }, (_, n) => [`g${n + 1}`, n + 1]),
    );
  });
});
