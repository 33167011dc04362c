import type { Redis } from 'ioredis';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { LeaguesService } from '../../../src/ranking/leagues/leagues.service';
import { LeaguesStore } from '../../../src/ranking/leagues/leagues.store';
import { LEAGUE_ROLL_BUDGET_UNITS } from '../../../src/ranking/options/leagues/leagues.limits';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { LeaguesModel } from '../../support/leagues-model';

/**
 * A rollover call (a scheduler's step, a moves read's rolling call) runs at most STEP_COMMANDS commands
 * and STEP_ARGUMENTS arguments in its script, however small or big the cohorts: a step of 300 members
 * counting a cohort's part as one more ran about 900 commands on cohorts of 2 (each part's page, bounds
 * and writes are about 10 commands), and its members' arguments are the time of a step of big cohorts
 * (300 members a step, every member moving on ties first: up to 4.4 ms at load 5-10). Counted without a
 * clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs); the moves stay the model's.
 */
const DAY_MS = 86_400_000;
const TIERS = ['bronze', 'silver', 'gold'];
/** A step's units as commands (a part's about 10 commands weigh 10 units), and the fixed few of every call. */
const STEP_COMMANDS = LEAGUE_ROLL_BUDGET_UNITS + 40;
/** A member's arguments (its page row, placement, tier and move): about 6, and each command's own. */
const STEP_ARGUMENTS = 7 * LEAGUE_ROLL_BUDGET_UNITS;

/** id, time, µs, arguments (at most 32: the last then "... (N more arguments)"), client address, name. */
type SlowlogEntry = [number, number, number, string[], string, string];
const SCRIPT_CLIENT = '?:0';

const argumentsOf = (args: string[]) => {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
};

describe('the commands of a leagues rollover call (single)', () => {
  const clock = new FakeClock(Date.parse('2026-03-02T12:00:00Z'));
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;
  let node: Redis;

  beforeAll(async () => {
    // A server of its own: the test reads every command it ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    node = redis.client as Redis;
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** Each rollover FCALL since the last reset: its commands and their arguments. */
  async function rolloverCalls(): Promise<Array<{ commands: number; args: number }>> {
    const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
    await node.slowlog('RESET');
    const calls: Array<{ commands: number; args: number }> = [];
    let inCall = { commands: 0, args: 0 };
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) inCall = { commands: inCall.commands + 1, args: inCall.args + argumentsOf(args) };
      else {
        if (/_league_(roll|moves)$/.test(String(args[1]))) calls.push(inCall);
        inCall = { commands: 0, args: 0 };
      }
    }
    return calls;
  }

  /** A board whose day placed `players` in cohorts of `size` (distinct scores), the day over. */
  async function played(name: string, size: number, players: number, ties: 'shared' | 'first') {
    const rule = { size, promote: size, relegate: size };
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'day', calendar: 'day' }],
      ties,
      leagues: { window: 'day', tiers: TIERS, ...rule },
    });
    const model = new LeaguesModel({ ...rule, tiers: TIERS.length, ties });
    const start = (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000;
    // Batches within the write bound on `ties: first` (an entry 10 units: its window, order and placement).
    for (let first = 0; first < players; first += 150) {
      const entries = Array.from({ length: Math.min(150, players - first) }, (_, k) => ({
        item: `p${first + k}`,
        amount: (((first + k) * 7919) % 100_003) + 1,
      }));
      await graph.ranking.incrementBatch(name, entries);
      for (const entry of entries) model.add(start, entry.item, entry.amount);
    }
    return { model, closed: start };
  }

  it('holds every step, the scheduler’s and a moves read’s, to its commands and arguments, cohorts of 2 or of 1 000', async () => {
    const small = await played('small', 2, 1200, 'shared');
    const big = await played('big', 1000, 2000, 'first');
    clock.advanceMs(DAY_MS);
    for (const board of [small, big]) board.model.enter(board.closed + 86_400);

    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.config('SET', 'slowlog-max-len', '100000');
    await node.slowlog('RESET');
    // The scheduler's steps roll the small board, a moves read rolls the big one as its page needs.
    const prepared = await graph.cache.get('small');
    const at = { board: prepared, nowMs: clock.nowMs(), currentSec: small.closed + 86_400 };
    while (!(await graph.module.get(LeaguesStore).roll(at)));
    const leagues = graph.module.get(LeaguesService);
    const read = async (name: string) => {
      const moves = [];
      for (let cursor: string | null = '0'; cursor !== null;) {
        const page = await leagues.moves(name, undefined, { offset: Number(cursor), limit: 1000 });
        moves.push(...page.moves);
        cursor = page.nextCursor;
      }
      return moves;
    };
    const bigMoves = await read('big');
    const calls = await rolloverCalls();
    await node.config('SET', 'slowlog-log-slower-than', '10000');

    const byItem = (a: { item: string }, b: { item: string }) => (a.item < b.item ? -1 : 1);
    for (const [name, board, moves] of [
      ['small', small, await read('small')],
      ['big', big, bigMoves],
    ] as const) {
      const want = board.model.moves.get(board.closed)!.map((m) => ({
        ...m,
        fromTier: TIERS[m.fromTier - 1],
        toTier: TIERS[m.toTier - 1],
      }));
      expect(want.length).toBeGreaterThan(0);
      expect({ name, moves: [...moves].sort(byItem) }).toEqual({ name, moves: want.sort(byItem) });
    }
    expect(calls.length).toBeGreaterThan(10);
    expect(Math.max(...calls.map((call) => call.commands))).toBeLessThanOrEqual(STEP_COMMANDS);
    expect(Math.max(...calls.map((call) => call.args))).toBeLessThanOrEqual(STEP_ARGUMENTS);
  });
});
