import type { Redis } from 'ioredis';
import { ADMIN } from '../../harness/app';
import { BoardsStore } from '../../src/ranking/boards/boards.store';
import { PRUNED_ATTEMPTS } from '../../src/ranking/core/ranking.limits';
import { RANKING } from '../../src/ranking/ranking.functions';
import { RankingService } from '../../src/ranking/ranking.service';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { useTestApp } from '../support/app-world';
import { shardTag } from '../support/boards';

/**
 * A reset whose PUT's instance stopped after the first prune step (issue #45): the groups maps and the
 * item data still hold entries of items no window holds. Without another PUT, the scheduler's pass
 * (two of them at once) ends the prune, and a group's moderation change first ends it itself, so the
 * maps, the effective moderation states and the change's own count of the group's items (422 past
 * MODERATED_GROUP_ITEMS_PER_SHARD) end as a twin's reset pruned at once.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
/** Items both windows hold; STALE only the window the reset remakes (more than one step's PRUNE_ENTRIES_PER_CALL). */
const HELD = 120;
const STALE = 1200;
const ARCHIVED = 100;
const GROUPS = 4;
const SEP = '\x1f';
const WINDOWS = [
  { name: 'm', period: '1h', interval: '1m' },
  { name: 'd', period: '1d', interval: '1h' },
];
const RESET_WINDOWS = [WINDOWS[0], { ...WINDOWS[1], period: '2d' }];
const PASS = { leaseMs: 30_000, claimBatch: 10 };

describe.each(['single', 'cluster'] as const)(
  'a reset a stopped PUT left pruning ends without a PUT (%s)',
  (topology) => {
    const world = useTestApp(topology, T0);
    const http = () => world.http();
    const node = () => world.redis.client as Redis;
    const tags = new Map<string, string>();

    async function seed(board: string): Promise<void> {
      await http().put(`/admin/boards/${board}`).set(ADMIN).send({ windows: WINDOWS, groups: true }).expect(201);
      await http().post(`/boards/${board}/items/h0/increment`).send({ amount: 1, group: 'g0' }).expect(200);
      const tag = await shardTag(world.redis, board);
      tags.set(board, tag);
      const batch = node().pipeline();
      const stored = (item: string, group: string) =>
        batch
          .hset(`${tag}groups`, item, group)
          .zadd(`${tag}bygroup`, 0, `${group}${SEP}${item}`)
          .hset(`${tag}data`, item, JSON.stringify({ item }));
      for (let i = 0; i < HELD; i++)
        stored(`h${i}`, `g${i % GROUPS}`)
          .zadd(`${tag}m:top`, 1, `h${i}`)
          .zadd(`${tag}d:top`, 1, `h${i}`);
      for (let i = 0; i < STALE; i++) stored(`s${i}`, `g${i % GROUPS}`).zadd(`${tag}d:top`, 1, `s${i}`);
      for (let i = 0; i < ARCHIVED; i++)
        batch.hset(`${tag}grouparch`, `z${i}`, 'a').zadd(`${tag}bygrouparch`, 0, `a${SEP}z${i}`);
      await batch.exec();
    }

    const reset = (board: string) =>
      http().put(`/admin/boards/${board}?reset=true`).set(ADMIN).send({ windows: RESET_WINDOWS, groups: true });

    /**
     * The reset's PUT, stopped after its first prune step: the next step's call fails as an instance killed
     * there would leave it (the PUT answers 500).
     */
    async function resetStopped(board: string): Promise<void> {
      const functions = world.app.get(RedisFunctions);
      const call = functions.call.bind(functions);
      let steps = 0;
      const stopped = jest.spyOn(functions, 'call').mockImplementation((fn, input) => {
        if (fn.name === RANKING.functions.pruneStep.name && ++steps > 1) return Promise.reject(new Error('stopped'));
        return call(fn, input);
      });
      await reset(board).expect(500);
      stopped.mockRestore();
      expect(steps).toBe(2);
      expect(await node().hget(`${tags.get(board)}cfg`, 'pruning')).toBe('1');
    }

    const hideGroup = (board: string) =>
      http().put(`/admin/boards/${board}/moderation/groups/g1`).set(ADMIN).send({ state: 'hidden' });

    /** The shard's maps (groups, their reverse, the archived map, item data), effective moderation states, and the pruning mark. */
    async function maps(board: string): Promise<unknown[]> {
      const tag = tags.get(board)!;
      return Promise.all([
        node().hgetall(`${tag}groups`),
        node().zrange(`${tag}bygroup`, 0, -1),
        node().hgetall(`${tag}grouparch`),
        node().zrange(`${tag}bygrouparch`, 0, -1),
        node().hgetall(`${tag}data`),
        node().hgetall(`${tag}modeff`),
        node().hexists(`${tag}cfg`, 'pruning'),
      ]);
    }

    beforeAll(async () => {
      for (const board of ['twin', 'passed', 'moderated', 'refused']) await seed(board);
      await reset('twin').expect(200);
    }, 120_000);

    it("the scheduler's passes end the prune; the group's count is then the twin's", async () => {
      await resetStopped('passed');
      world.clock.advanceSec(1);
      const ranking = world.app.get(RankingService);
      await Promise.all([ranking.expireDue(PASS), ranking.expireDue(PASS)]);
      expect(await maps('passed')).toEqual(await maps('twin'));
      await hideGroup('passed').expect(204);
      await hideGroup('twin').expect(204);
      expect(await maps('passed')).toEqual(await maps('twin'));
    }, 120_000);

    it("a group's moderation change ends the prune before it counts the group's items", async () => {
      await resetStopped('moderated');
      await hideGroup('moderated').expect(204);
      await hideGroup('twin').expect(204);
      expect(await maps('moderated')).toEqual(await maps('twin'));
    }, 120_000);

    it('a moderation change whose prune never ends (a reset landing each time) is a 409 CONFIG_CHANGED, nothing changed', async () => {
      await resetStopped('refused');
      const before = await maps('refused');
      // Each attempt's prune left undone, as another reset's would be.
      const boards = world.app.get(BoardsStore);
      const undone = jest.spyOn(boards, 'prune').mockResolvedValue(false);
      try {
        const refused = await hideGroup('refused').expect(409);
        expect(refused.body.code).toBe('CONFIG_CHANGED');
        expect(undone).toHaveBeenCalledTimes(PRUNED_ATTEMPTS - 1);
      } finally {
        undone.mockRestore();
      }
      expect(await maps('refused')).toEqual(before);
    }, 120_000);
  },
);
