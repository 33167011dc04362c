import { ApiProperty } from '@nestjs/swagger';
import { IdProperty, NameProperty, OptionalIntProperty } from '../../common/dto';
import { ACTOR_WEIGHT, DEFAULT_ACTOR_WEIGHT } from '../options/actor-caps/actor-caps.option';

export class ActorWeightParams {
  @NameProperty('Board name', 'posts')
  board!: string;

  @IdProperty('The actor', 'user-7')
  actor!: string;
}

export class PutActorWeightDto {
  @OptionalIntProperty(ACTOR_WEIGHT, {
    default: DEFAULT_ACTOR_WEIGHT,
    description:
      "What each of the actor's events counts: amount × weight (an integer; 0: its events add nothing, 1: as sent). From the answer on for new events; its live events already counted once the re-weighting is done",
  })
  weight?: number;
}

export class ActorWeightDto {
  @ApiProperty() actor!: string;
  @ApiProperty({ type: 'integer', minimum: ACTOR_WEIGHT.min, maximum: ACTOR_WEIGHT.max }) weight!: number;
  @ApiProperty({
    enum: ['running', 'done'],
    description: 'done: every live event of the actor counts at the weight in every window, view and segment',
  })
  state!: 'running' | 'done';
  @ApiProperty({
    type: 'integer',
    description: 'Live events of the actor counted again so far, each once (not per window)',
  })
  events!: number;
}
