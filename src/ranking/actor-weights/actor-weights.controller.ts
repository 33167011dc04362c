import { Body, Param, Put, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminBoardSteps, AdminRead } from '../../access/access.decorators';
import { answer } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { ActorWeightDto, ActorWeightParams, PutActorWeightDto } from '../dto/actor-weight.dto';
import { WEIGHED_ACTORS_PER_BOARD } from '../core/ranking.limits';
import { DEFAULT_ACTOR_WEIGHT } from '../options/actor-caps/actor-caps.option';
import { ActorWeightsService, ActorWeightView } from './actor-weights.service';

/** Actor weights (admin): what each event of an actor counts, retroactive over its live events. */
@RedisBackedController('ranking')
export class ActorWeightsController {
  constructor(private readonly weights: ActorWeightsService) {}

  @Put('admin/boards/:board/actors/:actor')
  @AdminBoardSteps(
    {
      summary: "Set an actor's weight: its events count amount × weight, its live events re-weighted",
      description: `Answers 202 once every shard holds the weight (new events count at it); the actor's live events already counted are re-weighted in bounded steps, in every window, view and segment, within the board's capPerItem (GET follows the progress). A PUT of the weight the actor has answers its progress and changes nothing. A board holds at most ${WEIGHED_ACTORS_PER_BOARD} actors of a weight other than 1 (409 ACTOR_WEIGHTS_FULL beyond, nothing stored); setting an actor back to 1 frees its place.`,
    },
    ActorWeightDto,
    'INVALID_INPUT: a weight out of 0-100 or not an integer, a board without actors',
  )
  @ErrorResponse(
    409,
    `ACTOR_WEIGHTS_FULL: the board holds ${WEIGHED_ACTORS_PER_BOARD} actors of a weight other than 1 and this one has none; set one back to 1 first`,
  )
  async put(
    @Param() params: ActorWeightParams,
    @Body() body: PutActorWeightDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ActorWeightView> {
    return answer(reply, await this.weights.put(params.board, params.actor, body.weight ?? DEFAULT_ACTOR_WEIGHT));
  }

  @AdminRead(
    'admin/boards/:board/actors/:actor',
    { summary: "An actor's weight and its re-weighting's progress" },
    ActorWeightDto,
  )
  @ErrorResponse(400, 'INVALID_INPUT: a board without actors')
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  get(@Param() params: ActorWeightParams): Promise<ActorWeightView> {
    return this.weights.get(params.board, params.actor);
  }
}
