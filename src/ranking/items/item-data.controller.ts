import { applyDecorators, Body, Delete, Param, Put } from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';
import { Exchange, WriteExchange } from '../../edge/retry-safe';
import { KeyedRoute, RetrySafeNoContent } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { GrowthQuotas } from '../../governance/growth-quotas';
import { ItemParams } from '../dto/item.dto';
import { ITEM_DATA_BODY } from '../dto/lookup.dto';
import { ITEM_DATA_BYTES } from '../options/item-data/item-data.limits';
import { ItemDataService } from './items.service';

/** A retry-safe write of an item's data: 204, 404 unknown board (or, for a PUT, an item the board does not hold). */
const ItemDataWrite = (summary: string, description: string) =>
  applyDecorators(
    RetrySafeNoContent(KeyedRoute('write', 'board'), { summary, description }, 'Done'),
    ErrorResponse(409, 'CONFIG_CHANGED (nothing applied: retry)'),
  );

@RedisBackedController('ranking')
export class ItemDataController {
  constructor(
    private readonly itemData: ItemDataService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @Put('boards/:board/items/:item/data')
  @ItemDataWrite(
    "Store an item's data",
    `Any JSON object of at most ${ITEM_DATA_BYTES} bytes serialized (UTF-8), replacing the item's data. Kept while some window of the board holds the item and removed with it; rows of top, around, items/:item and lookup carry it with ?data=true.`,
  )
  @ApiBody(ITEM_DATA_BODY)
  @ErrorResponse(404, 'BOARD_NOT_FOUND, ITEM_NOT_FOUND (no window of the board holds the item)')
  @ErrorResponse(413, `DATA_TOO_LARGE: over ${ITEM_DATA_BYTES} bytes of JSON`)
  put(@Param() params: ItemParams, @Body() data: unknown, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.write(params, data ?? null, exchange);
  }

  @Delete('boards/:board/items/:item/data')
  @ItemDataWrite("Remove an item's data", 'Answers 204 whether or not the item had data.')
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  remove(@Param() params: ItemParams, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.write(params, undefined, exchange);
  }

  private async write(params: ItemParams, data: unknown, exchange: WriteExchange): Promise<void> {
    await this.quotas.write(exchange, (sent) =>
      this.itemData.write({ name: params.board, item: params.item, data, ...sent }),
    );
  }
}
