import type Redis from 'ioredis';
import { PreparedBoard } from '../../src/ranking/core/board';
import type { ModerationState } from '../../src/ranking/moderation/moderation.functions';
import { RANKING } from '../../src/ranking/ranking.functions';
import type { CoalescedIncrement } from '../../src/ranking/writes/writes.functions';
import { fcallArgs } from '../../src/redis/redis-functions';
import type { RankingFunctions } from './ranking-functions';

const S = RANKING.functions;

/** Calls of the ranking library straight on one board's first shard, as the plain-path specs compare them. */
export function incrementTwins(setup: RankingFunctions) {
  const client = () => setup.redis.client as Redis;

  /**
   * Every request's answer as the service reads it: a plain request's record carries only what it
   * does not share with the call, so the replies differ in shape and must decode to the same answers.
   */
  const answersOf = async (board: PreparedBoard, nowMs: number, requests: CoalescedIncrement[]) => {
    const call = { board, shard: board.shards[0], nowMs, budgetFields: 1000, requests };
    const raw = await client().fcall(S.increments.redisName, ...fcallArgs(S.increments, S.increments.build(call)));
    return S.increments.decode(raw, call);
  };

  /** Sets `item`'s moderation state on the board's shard (null: none). */
  const moderate = async (board: PreparedBoard, nowMs: number, item: string, state: ModerationState | null) => {
    const call = { board, shard: board.shards[0], nowMs, budgetFields: 1000, item, state, most: 100 };
    const set = S.moderationSet;
    await client().fcall(set.redisName, ...fcallArgs(set, set.build(call)));
  };

  /** Every key of a board with its contents, the board's name taken out of the key. */
  async function contents(board: PreparedBoard): Promise<Record<string, unknown>> {
    const found: Record<string, unknown> = {};
    for (const key of await setup.redis.keys(`board:${board.config.name}}*`)) {
      const type = await client().type(key);
      const name = key.split(`board:${board.config.name}}`).join('board}');
      if (type === 'hash') found[name] = await client().hgetall(key);
      else if (type === 'zset') found[name] = await client().zrange(key, 0, -1, 'WITHSCORES');
      else found[name] = `${type}: ${String(await client().get(key))}`;
    }
    return found;
  }

  return { answersOf, moderate, contents };
}
