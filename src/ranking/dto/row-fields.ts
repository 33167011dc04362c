import { ApiProperty } from '@nestjs/swagger';

/** The tiebreak option's fields of writes and rows (src/ranking/options/tiebreak/). */
export { TIEBREAK_FIELD, TiebreakRowProperty, TiebreakWriteProperty } from '../options/tiebreak/tiebreak.option';

/** The groups option's fields of writes and rows (src/ranking/options/groups/). */
export { GROUP_FIELD, GroupProperty, RowGroupProperty, TruncatedProperty } from '../options/groups/groups.option';

/** The item data option's field of rows (src/ranking/options/item-data/). */
export { ItemDataRowProperty as DataProperty } from '../options/item-data/item-data.option';

/**
 * When a row's rank is null, as the reads decide it (order_lib.lua `listed`; moderation): a sum board
 * lists scores above 0, a max, min or last board every score a live slot holds, whatever its sign.
 */
const UNLISTED_RANK =
  'null when the window does not list the item: on a sum board while its score is 0 or below; on a max, min or last board (every sign listed, `order: asc` too) while no live slot holds a score of it; a read of an item moderation hides answers null too';

/** A board rank: `what` it is, then when it is null. */
export const ListedRankProperty = (what: string) =>
  ApiProperty({ nullable: true, type: 'integer', minimum: 1, description: `${what}; ${UNLISTED_RANK}` });

/** An item's score in a window, as each aggregate makes it. */
export const WindowScoreProperty = () =>
  ApiProperty({
    type: 'integer',
    description:
      "The item's score in the window: a sum board's sum over its live slots; a max, min or last board's max, min or latest score its live slots hold (0 when none)",
  });
