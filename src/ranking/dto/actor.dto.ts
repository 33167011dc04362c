import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { FieldRule, ID_FIELD, optional } from '../../common/compiled-checks';
import { IsId, IsOptionalNotNull } from '../../common/dto';
import { ID_LENGTH_CHARS } from '../../common/limits';
import { ID_RULE } from '../../common/names';

/** An event's optional actor: the compiled check's rule. */
export const ACTOR_FIELD = optional(ID_FIELD);

/** An event's optional actor (boards with `actors: true`) and its OpenAPI schema. */
export const ActorProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      description: `Who sent the event (${ID_RULE}), on a board with "actors": true (elsewhere 400): counted once per item by unique views, and taken out by a retraction of that actor`,
      example: 'user-7',
      minLength: ID_LENGTH_CHARS.min,
      maxLength: ID_LENGTH_CHARS.max,
    }),
    IsOptionalNotNull(),
    IsId(),
  );

/** A body's compiled rules with the optional actor beside them. */
export const withActor = (fields: Record<string, FieldRule>): Record<string, FieldRule> => ({
  ...fields,
  actor: ACTOR_FIELD,
});
