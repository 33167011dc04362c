import { ApiPropertyOptional } from '@nestjs/swagger';

/** The tiebreak option's fields of writes and rows (src/ranking/options/tiebreak/). */
export { TIEBREAK_FIELD, TiebreakRowProperty, TiebreakWriteProperty } from '../options/tiebreak/tiebreak.option';

/** The groups option's fields of writes and rows (src/ranking/options/groups/). */
export { GROUP_FIELD, GroupProperty, RowGroupProperty, TruncatedProperty } from '../options/groups/groups.option';

/** With ?data=true: the item's data (PUT /boards/:board/items/:item/data). */
export const DataProperty = () =>
  ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: "With ?data=true: the item's data (null: none)",
  });
