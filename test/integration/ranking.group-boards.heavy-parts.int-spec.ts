import type { Redis } from 'ioredis';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS, startTestRedis, type TestRedis } from '../../harness/redis';
import { shardOf } from '../../src/ranking/core/shard-math';
import { WindowDrainingError } from '../../src/common/errors';
import { mastersOf } from '../../src/redis/functions';
import { GroupModel } from '../support/group-model';
import { GroupHistoryModel } from '../support/group-history-model';
import { RankingModel } from '../support/ranking-model';
import { composeGraph } from '../support/ranking-graph';
import type { RankingGraph } from '../../harness/compose-ranking';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../support/slowlog';

/**
 * Issues #45/#48: a shard's part of a group board's listing over a sharded member board records a
 * group heavier than a whole crossing call (here ~600 of `big`'s counted members on each of 3 shards,
 * each weighing 2 crossing rows) over several calls (group_part_pages_lib): each call writes at most
 * 500 member rows, staged where no reader reads them, and the call of its last page writes the group's
 * text with its ordinal (what the merge reads a part by) in one HSET, so a merge sees it whole or not at
 * all. Before, the group went alone in one call of ~600 (up to 1 000) members. The answers stay the
 * brute-force model's (GroupHistoryModel): the listing, each group's history and previousRank, through
 * a boundary every shard crossed, quiet ones (a shard that ran no call through a slot: its heavy group
 * scored at the boundary a page a call) and an item retraction. SLOWLOG counts each master's calls.
 */
const T0 = 1_600_000_000_000;
const SNAPSHOTS = { keep: 4, top: 3 };
const WINDOWS = [{ name: 'w', periodSec: 60, intervalSec: 20, snapshots: SNAPSHOTS }];
const HISTORY = { name: 'w', intervalSec: 20, kept: SNAPSHOTS };
const RULE = { top: 600, decay: 1 };
/** Member rows one crossing call writes at most (snapshot_lib's 1 000 crossing rows, 2 a member). */
const ROWS_PER_CALL = 500;
/** snapshot_lib's crossing rows a call. */
const CROSSING_ROWS = 1000;
const BIG = Array.from({ length: 1800 }, (_, k) => `b${k}`);
const MID = Array.from({ length: 200 }, (_, k) => `m${k}`);
const FEW = Array.from({ length: 5 }, (_, k) => `f${k}`);
const GROUPS: Array<[string, string[]]> = [
  ['big', BIG],
  ['mid', MID],
  ['few', FEW],
];
/** Many ties among big's members: its pages end inside runs of equal scores. */
const scoreOf = (item: string, k: number) =>
  item[0] === 'b' ? 1 + (k % 97) : item[0] === 'm' ? 5 + (k % 13) : 200 + k;

/** The member rows an HSET of a call wrote into a part (its item fields) and the ordinal it wrote with a text. */
interface PartWrite {
  rows: number;
  ordinal?: string;
}

/** The arguments a SLOWLOG entry had (past 32 it logs 31 and "... (N more arguments)"). */
function argumentCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

function partWrites({ commands }: LoggedCall): PartWrite[] {
  return commands
    .filter(([name, key]) => name.toLowerCase() === 'hset' && /:part:\d+$/.test(key))
    .flatMap((args): PartWrite[] => {
      if (args[2].startsWith('i\x1f')) return [{ rows: (argumentCount(args) - 2) / 2 }];
      if (!args[2].startsWith('g\x1f')) return [];
      // A whole group's text and its rows (a light group), or a paged group's text and its ordinal.
      if (args[4]?.startsWith('o\x1f')) return [{ rows: 0, ordinal: `${args[2].slice(2)} ${args[5]}` }];
      return [{ rows: (argumentCount(args) - 4) / 2, ordinal: `${args[2].slice(2)} whole` }];
    });
}

/**
 * The crossing rows each call's part writes weighed, as group_part_pages_lib counts them: 2 a member row,
 * 2 more for each of a part's first 128 fields (Redis 7.0 adds them one by one to a listpack) a paged
 * group's page writes. `calls` in the order each node ran them, from a part's first write: a part's
 * fields counted as every HSET's pairs, so a field written twice counts twice (a looser bound).
 */
function partWork(calls: LoggedCall[]): number[] {
  const fields = new Map<string, number>();
  return calls.map(({ commands }) => {
    let work = 0;
    for (const args of commands.filter(([name, key]) => name.toLowerCase() === 'hset' && /:part:\d+$/.test(key))) {
      const [held, pairs] = [fields.get(args[1]) ?? 0, (argumentCount(args) - 2) / 2];
      if (args[2].startsWith('i\x1f')) work += 2 * pairs + 2 * Math.max(0, Math.min(pairs, 128 - held));
      else if (args[2].startsWith('g\x1f') && !args[4]?.startsWith('o\x1f')) work += 2 * (pairs - 1);
      fields.set(args[1], held + pairs);
    }
    return work;
  });
}

/** Over 3 shards, one node and a Cluster (one shard keeps no parts: each crossing keeps its listing). */
const CELLS = SHARD_CELLS.filter(([, shards]) => shards > 1);

describe.each(CELLS)(
  'a heavy group in shards’ parts of a group board’s listing (%s, %i shards)',
  (topology, shards) => {
    const clock = new FakeClock(T0);
    let redis: TestRedis;
    let graph: RankingGraph;
    let close: () => Promise<void>;
    beforeAll(async () => {
      redis = await startTestRedis(topology, { own: true });
      ({ graph, close } = await composeGraph(redis.env, clock));
    });
    afterAll(async () => {
      await close();
      await redis.stop();
    });

    const members = new RankingModel(WINDOWS);
    const groups = new GroupModel(RULE.top, RULE.decay);
    const history = new GroupHistoryModel(HISTORY, shards, members, groups);
    const calls: LoggedCall[] = [];
    const masters = (): Redis[] => mastersOf(redis.client);

    /** `run`, each master's calls meanwhile logged (SLOWLOG of every command) into `calls`. */
    async function logged<T>(run: () => Promise<T>): Promise<T> {
      for (const node of masters()) await logEveryCommand(node);
      const answer = await run();
      for (const node of masters()) {
        calls.push(...(await loggedCalls(node)));
        await stopLoggingEveryCommand(node);
      }
      return answer;
    }

    /** `read` again while the member window drains (503 WINDOW_DRAINING: the next read goes on from there). */
    async function drained<T>(read: () => Promise<T>): Promise<T> {
      for (let call = 1; ; call++) {
        try {
          return await read();
        } catch (error) {
          if (!(error instanceof WindowDrainingError) || call >= 20) throw error;
        }
      }
    }

    /** Every shard crossed (a read of the member board), as before each write of the property spec. */
    async function crossAll(): Promise<void> {
      await logged(() => graph.ranking.top('hm', 'w', 0, 1));
      history.cross(clock.nowMs());
    }

    async function increment(entries: Array<{ item: string; amount: number }>): Promise<void> {
      await crossAll();
      for (const { item, amount } of entries) {
        members.increment(clock.nowMs(), item, amount);
        history.wrote(clock.nowMs(), item);
      }
      for (let first = 0; first < entries.length; first += 1000)
        await logged(() => graph.ranking.incrementBatch('hm', entries.slice(first, first + 1000)));
    }

    async function join(items: string[], group: string, alone = false): Promise<void> {
      if (alone) items.forEach((item) => history.cross(clock.nowMs(), history.shardOf(item)));
      else await crossAll();
      for (const item of items) {
        groups.join(item, group);
        history.joined(clock.nowMs(), item);
      }
      for (let first = 0; first < items.length; first += 100)
        await logged(() =>
          Promise.all(
            items.slice(first, first + 100).map((item) => graph.groupBoards.setMember({ name: 'hg', group, item })),
          ),
        );
    }

    /** A read of the group board (it merges the parts), each master's calls logged; then the model's answers compared. */
    async function check(): Promise<void> {
      history.read(clock.nowMs());
      const readable = history.readable(clock.nowMs());
      const latest = readable[readable.length - 1];
      const answer = await logged(() => drained(() => graph.ranking.history('hg', undefined, undefined)));
      expect({ at: answer.at, rows: answer.items.map(({ rank, item, score }) => ({ rank, item, score })) }).toEqual({
        at: latest.at,
        rows: latest.rows,
      });
      for (const group of GROUPS.map(([name]) => name)) {
        const points = readable.map(({ at, rows }) => {
          const row = rows.find((r) => r.item === group);
          return { at, rank: row?.rank ?? null, score: row?.score ?? null };
        });
        const kept = await logged(() => graph.ranking.itemHistory('hg', undefined, group, undefined, undefined));
        expect({ group, points: kept.points }).toEqual({ group, points });
      }
      const previous = new Map(latest.rows.map((r) => [r.item, r.rank]));
      const top = await logged(() => graph.ranking.top('hg', undefined, 0, 10));
      expect(top.items.map((row) => [row.item, row.previousRank])).toEqual(
        top.items.map((row) => [row.item, previous.get(row.item) ?? null]),
      );
    }

    it('records it a page a call, published whole, and answers as the brute-force model', async () => {
      clock.setMs(T0 + 1000);
      const windows = [{ name: 'w', period: 60, interval: 20, snapshots: SNAPSHOTS }];
      await graph.ranking.putBoard({ name: 'hm', windows, shards });
      await graph.ranking.putBoard({ name: 'hg', groupOf: { board: 'hm', window: 'w', ...RULE } });
      for (const [group, items] of GROUPS) await join(items, group);
      await increment(GROUPS.flatMap(([, items]) => items.map((item, k) => ({ item, amount: scoreOf(item, k) }))));
      clock.setMs(T0 + 25_000);
      await increment([
        { item: 'b1', amount: 5 },
        { item: 'm0', amount: 3 },
      ]);
      await check(); // every shard's part at +20
      clock.setMs(T0 + 45_000);
      const [lone] = FEW.filter((item) => shardOf(item, shards) === shards - 1);
      await join([lone ?? FEW[0]], 'few', true); // its shard alone runs a call in slot +40
      clock.setMs(T0 + 85_000);
      await check(); // the others' quiet parts at +60 and +80 (slot +0 left the window by +80)
      await logged(async () => {
        const started = await graph.retractions.start('hm', { kind: 'item', id: 'b96' });
        await graph.retractions.settled('hm', started.body.id);
      });
      members.retract('b96');
      history.retract('b96');
      await increment([{ item: 'b2', amount: 1 }]);
      await check();

      const writes = calls.map(partWrites);
      expect(Math.max(0, ...writes.map((call) => call.reduce((sum, w) => sum + w.rows, 0)))).toBeLessThanOrEqual(
        ROWS_PER_CALL,
      );
      // A part's first fields weigh more (group_part_pages_lib's FRESH_WEIGHT): no call's writes pass a call's crossing rows.
      expect(Math.max(0, ...partWork(calls))).toBeLessThanOrEqual(CROSSING_ROWS);
      const bigTexts = writes.flat().flatMap((w) => (w.ordinal?.startsWith('big ') ? [w.ordinal] : []));
      // Each part's big group written by its last page, its text with its ordinal (never whole in
      // one call with its rows), those of more members than a call writes at both first checks' parts.
      expect(bigTexts.filter((text) => text.endsWith(' whole'))).toEqual([]);
      const counts = bigTexts.map((text) => parseInt(text.slice('big '.length), 10));
      expect(counts.filter((count) => count > ROWS_PER_CALL).length).toBeGreaterThanOrEqual(2 * shards);
    });
  },
);
