import type { BoardOption, BoardSettings } from '../../src/ranking/options/board-option';
import { optionsFromReply, optionsFromStored } from '../../src/ranking/options/registry';
import { BOARDS } from '../../harness/worst-case/boards';
import type { RankingGraph } from '../../harness/compose-ranking';
import type { WriteCommands } from '../../src/ranking/writes/write-commands';

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

/**
 * Board `board` of every option (everyOptionBoard) put and filled in batches of 100: `items` items,
 * item k scored `items - k`, sent by actor k mod `actors` in segment k mod `segments`.
 */
export async function seedEveryOptionBoard(
  graph: RankingGraph,
  commands: WriteCommands,
  board: string,
  fill: { items: number; actors: number; segments: number },
): Promise<void> {
  await graph.ranking.putBoard(everyOptionBoard(board));
  for (let first = 0; first < fill.items; first += 100) {
    const entries = Array.from({ length: 100 }, (_, k) => ({
      item: `i${first + k}`,
      amount: fill.items - first - k,
      actor: `a${(first + k) % fill.actors}`,
      segments: [`s${(first + k) % fill.segments}`],
    }));
    await graph.ranking.incrementBatch(commands.batch({ board, entries }));
  }
}

/**
 * An option's whole-number field as the registry keeps it: read from the config hash (a string) and
 * from board_put's answer, absent when not stored, and a reply holding something else refused.
 */
export function expectWholeNumberKept(option: Pick<BoardOption<object>, 'fromReply'>, field: string): void {
  expect(optionsFromStored({ [field]: '7' })).toMatchObject({ [field]: 7 });
  expect(optionsFromStored({})).not.toHaveProperty(field);
  expect(optionsFromReply('fn', JSON.stringify({ ties: 'shared', [field]: 7 }))).toMatchObject({ [field]: 7 });
  expect(() => option.fromReply({ [field]: 'x' })).toThrow(new RegExp(field));
}
