import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { optional } from '../../../common/compiled-checks';
import { IsOptionalNotNull, ToBool } from '../../../common/dto';
import { modulesOnly, type BoardOption, luaModulesIn } from '../board-option';
import { ITEM_DATA_BYTES, ITEM_DATA_ROWS_PER_CALL } from './item-data.limits';

/** An item's data in the OpenAPI document: any JSON object within ITEM_DATA_BYTES. */
export const ITEM_DATA_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  description: `A JSON object, at most ${ITEM_DATA_BYTES} bytes serialized (UTF-8)`,
} as const;

/** A read's `?data=true`: each row carries its item's data. */
export const ItemDataFlagProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: Boolean,
      default: false,
      description: `true: each row carries its item's data as \`data\` (null when it has none). The rows' data are read in calls of at most ${ITEM_DATA_ROWS_PER_CALL} rows on each shard; on \`top\` each call past one per shard is a read of the client's read budget`,
    }),
    IsOptionalNotNull(),
    ToBool(),
    IsBoolean({ message: 'data must be true or false' }),
  );

/** The compiled check of `?data=`. */
export const ITEM_DATA_FLAG_FIELD = optional({ kind: 'flag' });

/** A row's `data` with ?data=true: the item's data (PUT /boards/:board/items/:item/data). */
export const ItemDataRowProperty = () =>
  ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: "With ?data=true: the item's data (null: none)",
  });

/**
 * Item data: a JSON object per item a board holds (its own routes, PUT/GET .../items/:item/data, and
 * ?data=true on reads), with no setting in the board config. item_data_lib.lua keeps it while some
 * window holds the item: it registers item_left, windows_dropped and board_dropped.
 */
export const itemDataOption: BoardOption<object> = modulesOnly(
  'item-data',
  luaModulesIn(__dirname, 'item_data_lib.lua'),
);
