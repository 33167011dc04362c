import { Body, Param, Put, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminBoardSteps, AdminRead } from '../../access/access.decorators';
import { answer } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { AliasDto, AliasParams, PutAliasDto } from '../dto/alias.dto';
import { ALIASES_PER_BOARD } from '../core/ranking.limits';
import { AliasesService, AliasView } from './aliases.service';

/** Aliases (admin): another spelling of an item counts for it, retroactive over the alias's live events. */
@RedisBackedController('ranking')
export class AliasesController {
  constructor(private readonly aliases: AliasesService) {}

  @Put('admin/boards/:board/aliases/:alias')
  @AdminBoardSteps(
    {
      summary: "Name an alias of an item: its events count for the item, its live counts merged into the item's",
      description: `Answers 202 once the alias is stored and its shard refuses its events (every instance's writes name the canonical item instead within a second); the alias's live counts move into the canonical item's in bounded steps, in every window, view, segment and unique count (GET follows the progress). A repeat answers the progress and changes nothing. No chains: an item named as canonical that is an alias stands for its own canonical item; an alias naming another item, or named as canonical by other aliases, is refused. A board holds at most ${ALIASES_PER_BOARD} aliases, kept for good.`,
    },
    AliasDto,
    'INVALID_INPUT: an alias of itself, a max/min/last board',
  )
  @ErrorResponse(409, `ALIASES_FULL: the board holds ${ALIASES_PER_BOARD} aliases`)
  @ErrorResponse(409, 'ALIAS_CONFLICT: the alias names another item, or other aliases name it as canonical')
  async put(
    @Param() params: AliasParams,
    @Body() body: PutAliasDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AliasView> {
    return answer(reply, await this.aliases.put(params.board, params.alias, body.item));
  }

  @AdminRead(
    'admin/boards/:board/aliases/:alias',
    { summary: "An alias's canonical item and its merge's progress" },
    AliasDto,
  )
  @ErrorResponse(404, 'BOARD_NOT_FOUND, ITEM_NOT_FOUND (no such alias)')
  get(@Param() params: AliasParams): Promise<AliasView> {
    return this.aliases.get(params.board, params.alias);
  }
}
