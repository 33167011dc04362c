import { Body, Param, Post, Res } from '@nestjs/common';
import { FastRoute } from '../edge/fast-routes';
import type { FastifyReply } from 'fastify';
import { BoardWrite } from '../access/access.decorators';
import { answer } from '../edge/retry-safe';
import { RedisBackedController } from '../edge/route-decorators';
import { GrowthQuotas } from '../governance/growth-quotas';
import { IncrementResultDto, ItemParams } from './dto/item.dto';
import { ScoreDto } from './dto/score.dto';
import { RankingService } from './ranking.service';

/** The write of max / min / last boards. */
@RedisBackedController('ranking')
export class ScoresController {
  constructor(
    private readonly ranking: RankingService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @Post('boards/:board/items/:item/score')
  @FastRoute()
  @BoardWrite(
    'Record a score of an item on a max, min or last board',
    "One atomic step; answers each window's score and rank as an increment does. Each window answers the max / min / latest score the item recorded inside it, exactly, also after older slots expire. With `at`, the score lands in the slot of that time in every window whose live span still holds it. A sum board answers 409 AGGREGATE_MISMATCH.",
    IncrementResultDto,
  )
  async score(
    @Param() params: ItemParams,
    @Body() body: ScoreDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<IncrementResultDto> {
    const { idemKey, budget } = this.quotas.sentWith(reply.request);
    const { score, at, tiebreak } = body;
    return answer(reply, await this.ranking.score(params.board, params.item, score, idemKey, budget, at, tiebreak));
  }
}
