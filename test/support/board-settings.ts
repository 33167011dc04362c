import type { BoardSettings } from '../../src/ranking/options/board-option';

/** Sum board "b" as a PUT leaves it, for an option's check: holding `options`, and `more` of what else it holds. */
export function sumBoardSettings(options: Record<string, unknown>, more: Partial<BoardSettings> = {}): BoardSettings {
  return { name: 'b', aggregate: 'sum', options, ...more };
}
