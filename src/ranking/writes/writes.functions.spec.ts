import { ScriptReplyError } from '../../redis/replies';
import { PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import { WRITES_FUNCTIONS } from './writes.functions';

const keys = new RankingKeys('tb:');
const windows = [
  { name: 'h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 },
  { name: 'd', periodSec: 86_400, intervalSec: 3600, createdAtMs: 0 },
];
const board = new PreparedBoard({ name: 'b', version: 'v1', shards: 1, windows, maxItems: null, views: [] }, (shard) =>
  keys.board('b', shard),
);
const requests = ['a', 'b', 'c'].map((item) => ({ item, amount: 1, newItems: 1 }));
const call = { board, shard: board.shards[0], nowMs: 1_000, budgetFields: 100, requests };
const decode = (raw: unknown) => WRITES_FUNCTIONS.increments.decode(raw, call);

/**
 * increment.lua's reply (see its header): draining, then the answers as records after it, one per request: its general
 * answer's length and that answer (named fields after idem_lib's), or -1 and a plain record.
 */
describe("the coalesced increment's reply", () => {
  /** An applied request's answer on this board of two windows: [score, rank, previous rank] per window. */
  const applied = (
    made: [number, number, number, number],
    standings: Array<[number, number, number | null]>,
    replayed = false,
  ) => ({
    replayed,
    context: 'h,d',
    created: { items: made[0], due_ms: made[1], actor_entries: made[2], segment_entries: made[3] },
    value: {
      draining: true,
      standings: standings.map(([score, rank, previousRank]) => ({ score, rank, previousRank })),
      marks: undefined,
    },
  });

  it('reads plain records, general answers and refusals in order, each as its general answer would read', () => {
    const answers = decode([
      1,
      ...[
        // a general answer: outcome, context, what it created (items, due_ms, actor and segment entries),
        // then draining, scores, ranks, previous ranks (each joined over the windows), marks (none)
        11,
        ...[0, 'h,d', 1, 5_000, 2, 3, 1, '3,3', '2,4', '0,1', 0],
        // a plain record: created, scores, ranks
        -1,
        ...[1, '1,1', '7,9'],
        // a refused request
        2,
        ...[-1, 'TB_AT_OUT_OF_SPAN no window holds the slot'],
      ],
    ]);
    expect(answers[0]).toEqual(
      applied(
        [1, 5_000, 2, 3],
        [
          [3, 2, null],
          [3, 4, 1],
        ],
      ),
    );
    expect(answers[1]).toEqual(
      applied(
        [1, 0, 0, 0],
        [
          [1, 7, null],
          [1, 9, null],
        ],
      ),
    );
    expect(answers[2]).toBeInstanceOf(Error);
    expect((answers[2] as Error).message).toMatch(/TB_AT_OUT_OF_SPAN/);
  });

  it('replays an answer stored by a library from before the named contract in its positional layout', () => {
    // outcome 1 (a replay: no counts), context, then draining, score/rank per window, previous ranks
    const [answer] = decode([0, ...[9, ...[1, 'h,d', 1, 3, 2, 3, 4, 0, 1], -1, 1, '1,1', '7,9', 2, -1, 'x']]);
    expect(answer).toEqual(
      applied(
        [0, 0, 0, 0],
        [
          [3, 2, null],
          [3, 4, 1],
        ],
        true,
      ),
    );
  });

  it.each([
    ['a plain record cut short', [0, ...[-1, 1, '1,1']], /expected 4 entries from entry 0, got 3/],
    ['a general answer longer than the reply', [0, ...[12, 0, 'h,d']], /expected 13 entries from entry 0/],
    [
      'a record left over',
      [0, ...[...[-1, 1, '1,1', '7,9'], ...[-1, 1, '1,1', '7,9'], ...[-1, 1, '1,1', '7,9'], 5]],
      /expected 12 entries, got 13/,
    ],
    ['a missing record', [0, ...[-1, 1, '1,1', '7,9']], /expected an integer, got undefined/],
    [
      'a plain record of one window on a board of two',
      [0, ...[-1, 1, 1, 7, -1, 1, 1, 7, -1, 1, 1, 7]],
      /scores and ranks of 2 windows/,
    ],
    [
      // flat as the named reply is: its per-window pairs read as one window's fields
      'a reply of the positional layout',
      [0, -1, 1, 1, 7, 1, 9],
      /scores and ranks of 2 windows/,
    ],
  ])('refuses %s with an error naming the script', (_, raw, message) => {
    expect(() => decode(raw)).toThrow(ScriptReplyError);
    expect(() => decode(raw)).toThrow(message);
  });
});
