import { ADMIN, createBoard } from '../../../harness/app';
import { Topology } from '../../../harness/redis';
import { ActorWeightsService } from '../../../src/ranking/actor-weights/actor-weights.service';
import { actorDigest } from '../../../src/ranking/actor-weights/actor-weights.store';
import { BoardCache } from '../../../src/ranking/boards/board-cache';
import { WEIGHED_ACTORS_PER_BOARD } from '../../../src/ranking/core/ranking.limits';
import { useApp } from '../../support/e2e';

const WINDOWS = [{ name: 'hour', period: '1h', interval: '5m' }];
/** Weights set at once while the board is filled. */
const FILL_AT_ONCE = 50;

/**
 * The bound on weighed actors (issue #45): a board holds at most WEIGHED_ACTORS_PER_BOARD actors of a
 * weight other than 1, on every shard; one more is refused with nothing stored, and an actor set back
 * to 1 frees its place.
 */
describe.each<[Topology, number]>([
  ['single', 1],
  ['single', 4],
  ['cluster', 3],
])('weighed actors per board (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { http } = e2e;
  const weigh = (actor: string, weight: number) =>
    http().put(`/admin/boards/b/actors/${actor}`).set(ADMIN).send({ weight });
  const view = async (actor: string) =>
    (await http().get(`/admin/boards/b/actors/${actor}`).set(ADMIN).expect(200)).body;

  /** Each shard's weighed actors, as Redis holds them. */
  async function heldPerShard(): Promise<number[]> {
    const board = await e2e.app().get(BoardCache).get('b');
    return Promise.all(board.shards.map((shard) => e2e.redis().client.hlen(shard.keys.actorWeights())));
  }

  /** Each shard's re-weighting record of the actor: 1 held, 0 none. */
  async function recordsOf(actor: string): Promise<number[]> {
    const board = await e2e.app().get(BoardCache).get('b');
    const key = (shard: (typeof board.shards)[number]) => shard.keys.reweight(actorDigest(actor));
    return Promise.all(board.shards.map((shard) => e2e.redis().client.exists(key(shard))));
  }

  /**
   * Weighs WEIGHED_ACTORS_PER_BOARD actors (w0, w1, …) at 2 through the app's own service, as a PUT does
   * past its HTTP layer: 1 000 requests through supertest and Fastify were most of the file's CPU, and
   * the HTTP answers of the PUT are asserted on the requests that follow.
   */
  async function fill(): Promise<void> {
    const weights = e2e.app().get(ActorWeightsService);
    for (let first = 0; first < WEIGHED_ACTORS_PER_BOARD; first += FILL_AT_ONCE) {
      const actors = Array.from({ length: FILL_AT_ONCE }, (_, k) => `w${first + k}`);
      const views = await Promise.all(actors.map(async (actor) => (await weights.put('b', actor, 2)).body));
      expect(views.map((view) => view.weight)).toEqual(Array(FILL_AT_ONCE).fill(2));
    }
  }

  async function finished(actor: string): Promise<void> {
    for (let poll = 0; poll < 200; poll++) {
      if ((await view(actor)).state === 'done') return;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`re-weighting of ${actor} did not finish`);
  }

  // One test per board: filling it is most of the time.
  it('refuses one more weighed actor with 409 ACTOR_WEIGHTS_FULL (nothing stored); weight 1 frees a place', async () => {
    await createBoard(e2e.app(), 'b', { windows: WINDOWS, actors: true, shards });
    await fill();
    expect(await heldPerShard()).toEqual(Array(shards).fill(WEIGHED_ACTORS_PER_BOARD));
    const refused = await weigh('extra', 3).expect(409);
    expect(refused.body).toMatchObject({ code: 'ACTOR_WEIGHTS_FULL' });
    expect(refused.body.message).toContain(`${WEIGHED_ACTORS_PER_BOARD} weighed actors`);
    expect(await view('extra')).toEqual({ actor: 'extra', weight: 1, state: 'done', events: 0 });
    expect(await heldPerShard()).toEqual(Array(shards).fill(WEIGHED_ACTORS_PER_BOARD));
    // A weighed actor takes no new place for another weight, nor an actor asked for the default.
    await weigh('w7', 5).expect(202);
    await weigh('other', 1).expect(202);
    expect(await heldPerShard()).toEqual(Array(shards).fill(WEIGHED_ACTORS_PER_BOARD));

    await weigh('w0', 1).expect(202);
    await finished('w0');
    expect(await view('w0')).toMatchObject({ weight: 1, state: 'done' });
    expect(await recordsOf('w0')).toEqual(Array(shards).fill(0));
    expect(await heldPerShard()).toEqual(Array(shards).fill(WEIGHED_ACTORS_PER_BOARD - 1));
    await weigh('extra', 3).expect(202);
    await finished('extra');
    expect(await view('extra')).toMatchObject({ weight: 3, state: 'done' });
    expect((await weigh('extra2', 3).expect(409)).body).toMatchObject({ code: 'ACTOR_WEIGHTS_FULL' });
    expect(await heldPerShard()).toEqual(Array(shards).fill(WEIGHED_ACTORS_PER_BOARD));
  });
});
