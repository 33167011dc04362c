import type { Redis } from 'ioredis';
import { ADMIN } from '../../../harness/app';
import { BoardsStore } from '../../../src/ranking/boards/boards.store';
import { PRUNED_ATTEMPTS } from '../../../src/ranking/core/ranking.limits';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { RankingService } from '../../../src/ranking/ranking.service';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { useTestApp } from '../../support/app-world';
import { GROUPED_RESET_WINDOWS, groupedMaps, type PrunableSeed, seedPrunableBoard } from '../../support/grouped-seed';

/**
 * A reset whose PUT's instance stopped after the first prune step (issue #45): the groups maps and the
 * item data still hold entries of items no window holds. Without another PUT, the scheduler's pass
 * (two of them at once) ends the prune, and a group's moderation change first ends it itself, so the
 * maps, the effective moderation states and the change's own count of the group's items (422 past
 * MODERATED_GROUP_ITEMS_PER_SHARD) end as a twin's reset pruned at once.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
/** Items both windows hold; stale ones only the window the reset remakes (more than one step's PRUNE_ENTRIES_PER_CALL). */
const SEED: PrunableSeed = {
  ...{ held: 120, stale: 1200, archived: 100 },
  group: (i) => `g${i % 4}`,
  data: (i, stale) => ({ item: `${stale ? 's' : 'h'}${i}` }),
};
const PASS = { leaseMs: 30_000, claimBatch: 10 };

describe.each(['single', 'cluster'] as const)(
  'a reset a stopped PUT left pruning ends without a PUT (%s)',
  (topology) => {
    const world = useTestApp(topology, T0);
    const http = () => world.http();
    const node = () => world.redis.client as Redis;
    const tags = new Map<string, string>();

    async function seed(board: string): Promise<void> {
      tags.set(board, await seedPrunableBoard(world, board, SEED));
    }

    const reset = (board: string) =>
      http().put(`/admin/boards/${board}?reset=true`).set(ADMIN).send({ windows: GROUPED_RESET_WINDOWS, groups: true });

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
        ...groupedMaps(node(), tag),
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
