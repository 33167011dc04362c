import type { BoardSettings } from '../../src/ranking/options/board-option';
import { BOARDS } from '../../harness/worst-case/boards';

const SUM = BOARDS['wc-sum'];

/** Sum board "b" as a PUT leaves it, for an option's check: holding `options`, and `more` of what else it holds. */
export function sumBoardSettings(options: Record<string, unknown>, more: Partial<BoardSettings> = {}): BoardSettings {
  return { name: 'b', aggregate: 'sum', options, ...more };
}

/** The worst-case harness's board of every option (wc-sum: 8 windows, 8 views, segments, ties first, capped actors) as a ranking PUT. */
export function everyOptionBoard(name: string) {
  return {
    name,
    windows: [...SUM.windows],
    views: [...SUM.views],
    ties: SUM.ties,
    capPerItem: SUM.actors.capPerItem,
    actors: true,
    segmentsMax: SUM.segments.max,
  };
}
