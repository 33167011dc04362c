import { DomainError } from '../../../src/common/errors';
import { FakeClock } from '../../../harness/clock';
import type { PutBoardInput } from '../../../src/ranking/boards/boards.service';
import { useOwnServerRanking } from '../../../harness/ranking';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * An archive read drains a closed period weighed as a write's drain is (drain_lib's read_fields): on a
 * `ties: first` tiebreak board each drained field runs ~9 commands (its pair order's member taken for the
 * archive, the item leaving the results, its tie mark and pair order entry dropped), and a read call of
 * EXPIRE_CHUNK (100) fields ran 916 commands, 13 M instructions (10.6 ms at the worst-case harness's full
 * size, issue #45). Counted without a clock: the fields each read call takes from the closed slot
 * (HRANDFIELD's count, or the whole slot by HGETALL) and the commands it runs; the archive stays exact.
 */
const T0 = Date.parse('2031-03-03T12:00:00Z');
const DAY_MS = 86_400_000;
const ITEMS = 300;
/** A read call's fields: EXPIRE_CHUNK (100) less the weight of what the board's options run for each. */
const MOST_FIELDS = 30;
const MOST_COMMANDS = 320;
const BOARD: PutBoardInput = {
  name: 'tb-drain',
  aggregate: 'max',
  tiebreak: { order: 'asc' },
  ties: 'first',
  windows: [{ name: 'day', calendar: 'day', archive: { keep: 3, top: ITEMS } }],
};

/** The fields a logged call's script took from a slot hash by HRANDFIELD (a slot left smaller is taken whole). */
function fieldsTaken(commands: string[][]): number {
  return commands
    .filter(([command]) => command.toLowerCase() === 'hrandfield')
    .reduce((fields, args) => fields + Number(args[2]), 0);
}

describe('an archive read draining a tiebreak board of ties first (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  it('takes at most 30 fields a call, within 320 commands, and archives the period exact', async () => {
    const { ranking, node } = own();
    await ranking.putBoard(BOARD);
    for (let first = 0; first < ITEMS; first += 100)
      await ranking.incrementBatch(
        BOARD.name,
        Array.from({ length: 100 }, (_, k) => ({ item: `c${first + k}`, score: 7, tiebreak: 0 })),
      );
    const before = await ranking.top(BOARD.name, 'day', 0, ITEMS);
    clock.advanceMs(DAY_MS);

    await logEveryCommand(node);
    let drained = false;
    for (let read = 0; read < 20 && !drained; read++)
      drained = await ranking.archives(BOARD.name, 'day', 1, undefined).then(
        () => true,
        (error: unknown) => {
          if (error instanceof DomainError && error.code === 'WINDOW_DRAINING') return false;
          throw error;
        },
      );
    const calls = (await loggedCalls(node)).filter(({ call }) => /archive_read$/.test(String(call[1])));
    await stopLoggingEveryCommand(node);

    const taken = calls.map(({ commands }) => fieldsTaken(commands));
    expect(Math.max(...taken)).toBeLessThanOrEqual(MOST_FIELDS);
    expect(Math.max(...calls.map(({ commands }) => commands.length))).toBeLessThanOrEqual(MOST_COMMANDS);
    expect(drained).toBe(true);
    const archive = await ranking.archive(BOARD.name, 'day', undefined, { offset: 0, limit: ITEMS });
    const ranked = before.items.map(({ item, score, rank }) => [item, score, rank]);
    expect(archive.items.map(({ item, score, rank }) => [item, score, rank])).toEqual(ranked);
  });
});
