import { applyDecorators, Controller } from '@nestjs/common';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { ApiHeader, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from '../common/errors';

/** The body of every error answer (see the README's "Errors and retries"). */
export class ErrorBodyDto {
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 404 }) statusCode!: number;
  @ApiProperty({
    description: 'What went wrong, naming the field or the resource',
    example: 'board "x" does not exist',
  })
  message!: string;
  @ApiProperty({ example: 'Not Found' }) error!: string;
  @ApiProperty({ enum: Object.keys(ERROR_CODES), description: 'Stable machine code: act on it, not on the message' })
  code!: ErrorCode;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Per-dependency health, on a NOT_READY answer only',
  })
  details?: object;
}

/** An error answer with its codes listed in the description. */
export const ErrorResponse = (status: number, description: string) =>
  ApiResponse({ status, description, type: ErrorBodyDto });

/**
 * A controller whose routes need Redis, under the OpenAPI tag `tag` and the route prefix `path`: 400 on
 * bad input, 503 while Redis is away or this instance sheds load (and, on its /admin routes, while no
 * admin credential is configured). Its parts are listed bottom-up, as the decorators it stands for
 * were stacked.
 */
export const RedisBackedController = (tag: string, path?: string) =>
  applyDecorators(
    path === undefined ? Controller() : Controller(path),
    ErrorResponse(400, 'INVALID_INPUT: the message names the field'),
    ErrorResponse(
      503,
      'REDIS_UNAVAILABLE, REDIS_BUSY (this instance sheds load: nothing was sent); ADMIN_DISABLED on /admin routes (neither ADMIN_TOKEN nor an admin key is configured); WINDOW_DRAINING on reads of a window whose expired slot is still being drained; SPAN_READS_BUSY on a filtered read over a span while the window holds its most such reads in progress (SPAN_STAGED_READS_PER_SHARD a shard)',
    ),
    ApiTags(tag),
  );

/** A write that takes an Idempotency-Key: a repeat within the retention answers the first answer again. */
export const RetrySafe = () =>
  applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        '1-128 printable ASCII characters. A repeat with the same key within IDEMPOTENCY_TTL_SEC answers the stored answer with Idempotent-Replayed: true and applies nothing; the same key with another request is a 422 IDEMPOTENCY_KEY_REUSED.',
    }),
    ErrorResponse(422, 'IDEMPOTENCY_KEY_REUSED'),
    ErrorResponse(
      429,
      'QUOTA_EXCEEDED: the write would create more new entries than its client may now (Retry-After); existing ones keep counting',
    ),
  );

/**
 * Adds fields to a route's Fastify `config` (what Nest's RouteConfig sets), keeping those other
 * decorators put there: RouteConfig replaces the whole object, so the access rule and the fast route
 * marker, set by separate decorators, would otherwise erase each other.
 */
export function RouteConfigFields(fields: Record<string, unknown>): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    // On a class, as RouteConfig does: Nest's Fastify adapter reads a route's config from its method only.
    const holder = (descriptor?.value as object | undefined) ?? target;
    const held = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, holder) ?? {}) as Record<string, unknown>;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...held, ...fields }, holder);
  };
}
