import { checkOptions } from '../registry';
import type { BoardSettings } from '../board-option';
import { sumBoardSettings } from '../../../../test/support/board-settings';
import { historyRowsMost } from './metrics.option';

/** Sum board "b" of `metrics` whose `windows` windows each keep `keep` x `top` rows of history (`calendar`: archives). */
const board = (metrics: number, windows: number, history: { calendar: boolean; keep: number; top: number }) =>
  sumBoardSettings(
    { metrics: Array.from({ length: metrics }, (_, m) => `m${m}`) },
    { histories: { windows: Array.from({ length: windows }, () => history), mostWindows: 8 } },
  ) satisfies BoardSettings;

const LARGEST_SNAPSHOTS = { calendar: false, keep: 1000, top: 1000 };
const LARGEST_ARCHIVES = { calendar: true, keep: 1000, top: 10_000 };

describe('the metrics option', () => {
  it('bounds the history rows a board may keep by what its most windows keep at their largest', () => {
    expect(historyRowsMost(8)).toEqual({ snapshots: 8_000_000, archives: 80_000_000, archiveRecords: 80_000_000 });
  });

  it('takes metrics whose histories together keep what a board of one metric may keep', () => {
    expect(() => checkOptions(board(2, 4, LARGEST_SNAPSHOTS))).not.toThrow();
    expect(() => checkOptions(board(8, 1, LARGEST_SNAPSHOTS))).not.toThrow();
    expect(() => checkOptions(board(2, 4, LARGEST_ARCHIVES))).not.toThrow();
  });

  it('refuses metrics whose histories together would keep more, naming the kind of rows', () => {
    expect(() => checkOptions(board(2, 5, LARGEST_SNAPSHOTS))).toThrow(
      /each metric keeps its own snapshots: board "b" would keep 10000000 rows .* past the 8000000/,
    );
    expect(() => checkOptions(board(3, 3, LARGEST_ARCHIVES))).toThrow(/each metric keeps its own archives/);
  });
});
