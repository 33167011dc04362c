import type { PreparedBoard } from './board';

/**
 * The window whose contributions count an actor's events once (a retraction's, a re-weighting's): the
 * longest rolling one, which holds every live event (a calendar window starts empty each period); a
 * board of calendar windows only, its longest.
 */
export function ledgerWindowOf(board: PreparedBoard): number {
  const windows = board.config.windows;
  const rank = (i: number) => [windows[i].calendar ? 0 : 1, windows[i].periodSec];
  return windows.reduce((best, _, i) => {
    const [a, b] = [rank(i), rank(best)];
    return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]) ? i : best;
  }, 0);
}
