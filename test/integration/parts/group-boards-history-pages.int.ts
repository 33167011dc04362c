import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { SHARDS_PER_BOARD } from '../../../src/ranking/core/ranking.limits';
import { GROUP_HISTORY_PAGE_ROWS, MAX_MEMBERS_PER_GROUP } from '../../../src/ranking/options/group-of/group-of.limits';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * A sharded group board's history merge handles at most GROUP_HISTORY_PAGE_ROWS member rows a call
 * (issues #45/#48): on 64 shards, shard 0 holding 4 groups of their most members there (1 252 rows,
 * more than a page), every group_history_parts call reads at most a page of its part's groups and
 * every group_history_store call writes at most a page of the listing's record, and the listing kept
 * is every group's exact score, its record every counted member once though a merge before it was
 * cut short after a page (a crash between calls). Before, one call read a shard's whole part
 * (HGETALL) and one call stored the whole record. Counted without a clock, from the commands SLOWLOG logged (at 0 µs).
 */
const T0 = Date.UTC(2026, 11, 4);
const SHARDS = SHARDS_PER_BOARD.max;
/** A group's most members on one shard of the member board (group-boards.store.ts's limitsOf). */
const PER_SHARD = Math.ceil((2 * MAX_MEMBERS_PER_GROUP) / SHARDS);
/** g0's members, spread over the shards; g1..g4 PER_SHARD each, all on shard 0. */
const SPREAD = 200;
const GROUPS = 5;

function membersOf(group: number): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < (group === 0 ? SPREAD : PER_SHARD); k++) {
    const item = `q${group}-${k}`;
    if (group === 0 || shardOf(item, SHARDS) === 0) names.push(item);
  }
  return names;
}

/** The FCALLs of `suffix`'s function among `calls`. */
const callsOf = (calls: LoggedCall[], suffix: string) => calls.filter(({ call }) => String(call[1]).endsWith(suffix));

/** The arguments a SLOWLOG entry had (past 32 it logs 31 and "... (N more arguments)"). */
function argumentCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

describe('the calls of a sharded group board’s history merge (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every call it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  it('reads and stores at most a page of member rows a call, the listing exact', async () => {
    const { ranking, groupBoards, node, functions, redisService } = own();
    const windows = [{ name: 'm', period: 3600, interval: 60, snapshots: { keep: 4, top: 1000 } }];
    await ranking.putBoard({ name: 'hm', windows, shards: SHARDS });
    await ranking.putBoard({ name: 'ht', groupOf: { board: 'hm', window: 'm', top: 1000, decay: 1 } });
    const scores = new Map<string, number>();
    for (let g = 0; g < GROUPS; g++) {
      const items = membersOf(g);
      for (let first = 0; first < items.length; first += 100)
        await Promise.all(
          items.slice(first, first + 100).map((item) => groupBoards.setMember({ name: 'ht', group: `g${g}`, item })),
        );
      await ranking.incrementBatch(
        'hm',
        items.map((item, k) => ({ item, amount: 1 + k + g })),
      );
      scores.set(`g${g}`, (items.length * (items.length + 1)) / 2 + g * items.length);
    }
    await ranking.top('ht', undefined, 0, 10);
    clock.advanceMs(60_000);
    // A merge of this boundary cut short after its first page (its process gone): g1 and a group that
    // is no more in its record, under its token. The next merge starts the record afresh.
    const atSec = T0 / 1000 + 60;
    const shard = new RankingKeys(redisService.prefix).board('hm', 0);
    const crashed = { groupBoard: 'ht', window: 'm', shard, nowMs: clock.nowMs(), atSec, intervalSec: 60 };
    const rows = (group: string) => membersOf(Number(group.slice(1))).flatMap((item) => [item, '1']);
    await functions.call(RANKING.functions.groupHistoryStore, {
      ...{
        ...crashed,
        keep: 4,
        top: 1000,
        rule: '1000 1',
        room: 1000,
        boards: 8,
        token: 'crashed',
        first: true,
        noted: 0,
      },
      ...{
        groups: [
          ['g1', '313', rows('g1')],
          ['gone', '1', ['x', '1']],
        ],
        listing: null,
      },
    });

    await logEveryCommand(node);
    const answer = await ranking.history('ht', undefined, undefined);
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);

    expect(answer.items.map(({ item, score }) => ({ item, score }))).toEqual(
      [...scores].map(([item, score]) => ({ item, score })).sort((a, b) => b.score - a.score),
    );
    // The member rows of the part's groups a call read: each group text read, or every group of a part.
    const onShard = (group: string, key: string) => {
      const shard = Number(/board:hm(?:\/(\d+))?\}/.exec(key)?.[1] ?? 0);
      return membersOf(Number(group.slice(1))).filter((item) => shardOf(item, SHARDS) === shard).length;
    };
    const read = callsOf(calls, '_group_history_parts').map(({ commands }) =>
      commands.reduce((sum, [name, key, field]) => {
        if (!key?.includes(':part:')) return sum;
        if (name.toLowerCase() === 'hgetall') return sum + [...scores.keys()].reduce((a, g) => a + onShard(g, key), 0);
        if (name.toLowerCase() === 'hget' && field?.startsWith('g\x1f')) return sum + onShard(field.slice(2), key);
        return sum;
      }, 0),
    );
    // The record's member rows a call wrote: an HSET of a group's text and its items' fields.
    const written = callsOf(calls, '_group_history_store').map(({ commands }) =>
      commands
        .filter(
          ([name, key, field]) => name.toLowerCase() === 'hset' && key.includes(':cnt:') && field?.startsWith('g\x1f'),
        )
        .reduce((sum, args) => sum + Math.max(0, (argumentCount(args) - 4) / 2), 0),
    );
    expect(Math.max(...read)).toBeGreaterThan(0);
    expect(Math.max(...read)).toBeLessThanOrEqual(GROUP_HISTORY_PAGE_ROWS);
    expect(written.reduce((a, b) => a + b, 0)).toBe(SPREAD + 4 * PER_SHARD);
    expect(Math.max(...written)).toBeLessThanOrEqual(GROUP_HISTORY_PAGE_ROWS);
    // The record holds every counted member once, of the listed groups only.
    const record = await node.hgetall(`${shard.cfg().slice(0, -'cfg'.length)}m%ht:cnt:${atSec}`);
    expect(
      Object.keys(record)
        .filter((field) => field.startsWith('g\x1f'))
        .sort(),
    ).toEqual([...scores.keys()].map((group) => `g\x1f${group}`));
    expect(Object.keys(record).filter((field) => field.startsWith('i\x1f')).length).toBe(SPREAD + 4 * PER_SHARD);
    expect(record['\x1dc']).toBe(String(SPREAD + 4 * PER_SHARD));
  });
});
