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

/** increment.lua's flat reply (see its header): the call's draining flag, then one record per request. */
describe("the coalesced increment's flat reply", () => {
  it('reads plain records, general answers and refusals in order, each as its general answer would read', () => {
    const answers = decode([
      1,
      // a general answer: outcome, context, created, due, new contributions and segment entries,
      // draining, score/rank per window, previous ranks
      13,
      ...[0, 'h,d', 1, 5_000, 2, 3, 1, 3, 2, 3, 4, 0, 1],
      // a plain record: created, score/rank per window
      -1,
      ...[1, 1, 7, 1, 9],
      // a refused request
      2,
      ...[-1, 'TB_AT_OUT_OF_SPAN no window holds the slot'],
    ]);
    /** An applied request's answer on this board of two windows: [score, rank, previous rank] per window. */
    const applied = (created: number[], standings: Array<[number, number, number | null]>) => ({
      replayed: false,
      context: 'h,d',
      created,
      value: {
        draining: true,
        standings: standings.map(([score, rank, previousRank]) => ({ score, rank, previousRank })),
        marks: undefined,
      },
    });
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

  it.each([
    ['a plain record cut short', [0, -1, 1, 1, 7, 1], /expected 5 entries from entry 2, got 4/],
    ['a general answer longer than the reply', [0, 12, 0, 'h,d'], /expected 12 entries from entry 2/],
    [
      'a record left over',
      [0, ...[-1, 1, 1, 7, 1, 9], ...[-1, 1, 1, 7, 1, 9], ...[-1, 1, 1, 7, 1, 9], 5],
      /expected 19 entries, got 20/,
    ],
    ['a missing record', [0, -1, 1, 1, 7, 1, 9], /expected an integer, got undefined/],
  ])('refuses %s with an error naming the script', (_, raw, message) => {
    expect(() => decode(raw)).toThrow(ScriptReplyError);
    expect(() => decode(raw)).toThrow(message);
  });
});
