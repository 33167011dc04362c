import { InvalidInputError } from '../../../common/errors';
import { modeProperties } from '../../../common/dto';
import { fieldSetting, modeOf, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';

/** Which scores rank higher: the higher (desc, the default) or the lower (asc: race times, golf). */
export const SCORE_ORDERS = ['desc', 'asc'] as const;
export type ScoreOrder = (typeof SCORE_ORDERS)[number];

/** The option's part of a board config. */
export interface OrderConfig {
  /** asc: lower scores rank higher; absent (or desc): higher scores do. */
  order?: ScoreOrder;
}

/** Why a board may not take `order: asc` (INVALID_INPUT, 400). */
export const ORDER_MESSAGES = {
  ascNeedsBest: (board: string) =>
    `order asc ranks recorded scores: board "${board}" aggregates by sum (a sum is listed only above 0, and views weigh sums highest first); use aggregate max, min or last, or order desc`,
  ascWithStrictTies: (board: string) =>
    `order asc goes with ties first only on a board with a tiebreak: board "${board}" keeps its strict order highest score first; use ties shared, order desc or a tiebreak`,
};

/**
 * The board PUT's `order` field: its schema and validation (applied bottom-up, as stacked decorators are),
 * and the board view's (present when asc).
 */
export const { put: OrderProperty, view: OrderViewProperty } = modeProperties(
  SCORE_ORDERS,
  'Which scores rank higher: "desc" (higher first) or "asc" (lower first: race times, golf); every read (top, items, around, lookup, history, archives, stream, percentile) follows it. asc needs aggregate max, min or last (400 INVALID_INPUT on a sum board, with views, or with ties first on a board without a tiebreak). Omitted: the current order (desc for a new board). A change keeps the data (the next reads list it the other way), but on a board with a tiebreak it needs ?reset=true and drops the data (its pairs are kept in the board order)',
  ['asc'],
  'Lower scores rank higher; absent: higher scores do (desc)',
);

const ascending = (config: Readonly<OrderConfig>) => config.order === 'asc';

/** `order: asc`: score_order_lib.lua's hooks list and count the results lowest score first. */
export const orderOption: BoardOption<OrderConfig> = {
  ...fieldSetting<OrderConfig>('order', { put: OrderProperty, view: OrderViewProperty }),
  luaModules: luaModulesIn(__dirname, 'score_order_lib.lua'),
  fromStored: (fields) => (fields.order === 'asc' ? { order: 'asc' } : {}),
  fromReply: (fields) =>
    fields.order !== undefined && modeOf('order', SCORE_ORDERS, fields.order) === 'asc' ? { order: 'asc' } : {},
  view: (config) => (ascending(config) ? { order: 'asc' } : {}),
  ascending,
  check: (board: BoardSettings) => {
    if (board.options.order !== 'asc') return;
    if (board.aggregate === 'sum') throw new InvalidInputError(ORDER_MESSAGES.ascNeedsBest(board.name));
    if (board.options.ties === 'first' && board.options.tiebreak === undefined)
      throw new InvalidInputError(ORDER_MESSAGES.ascWithStrictTies(board.name));
  },
};
