import { applyDecorators, HttpCode } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';
import { Access } from '../access/access.decorators';
import { ERROR_CODES, ErrorCode } from './errors';

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
 * A controller whose routes need Redis: 400 on bad input, 503 while Redis is away or this instance
 * sheds load (and, on its /admin routes, while no admin credential is configured).
 */
export const RedisBackedController = () =>
  applyDecorators(
    ErrorResponse(400, 'INVALID_INPUT: the message names the field'),
    ErrorResponse(
      503,
      'REDIS_UNAVAILABLE, REDIS_BUSY (this instance sheds load: nothing was sent); ADMIN_DISABLED on /admin routes (neither ADMIN_TOKEN nor an admin key is configured); WINDOW_DRAINING on reads of a window whose expired slot is still being drained',
    ),
  );

/**
 * An /admin route: ADMIN_TOKEN or a key with the admin scope (401 missing, 403 wrong or without the
 * scope, 503 when neither is configured).
 */
export const AdminRoute = () =>
  applyDecorators(
    Access({ scope: 'admin' }),
    ErrorResponse(401, 'ADMIN_TOKEN_MISSING'),
    ErrorResponse(403, 'ADMIN_TOKEN_INVALID, API_KEY_SCOPE'),
  );

/** A route that needs a key with `scope` once keys exist; name prefixes of a key apply to `nameParam`. */
export const KeyedRoute = (scope: 'read' | 'write', nameParam?: string) =>
  applyDecorators(
    Access({ scope, nameParam }),
    ErrorResponse(401, 'API_KEY_MISSING, API_KEY_INVALID'),
    ErrorResponse(403, 'API_KEY_SCOPE'),
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

/** A write to a board's items: 200 with `type`, 404 unknown board, 409 the board changed under the request. */
export const BoardWrite = (summary: string, description: string, type: new () => object) =>
  applyDecorators(
    KeyedRoute('write', 'board'),
    HttpCode(200),
    RetrySafe(),
    ApiOperation({ summary, description }),
    ApiResponse({ status: 200, type }),
    ErrorResponse(404, 'BOARD_NOT_FOUND'),
    ErrorResponse(
      409,
      'CONFIG_CHANGED (nothing applied: retry), BOARD_INCOMPLETE, WRITE_APPLIED_RANK_UNKNOWN (applied: do not repeat), BATCH_PARTIAL, BOARD_FULL (a new item beyond maxItems: nothing applied)',
    ),
  );

/** A read of one window of a board: 200 with `type`, 404 unknown board or window. */
export const WindowRead = (summary: string, description: string, type: new () => object) =>
  applyDecorators(
    KeyedRoute('read', 'board'),
    ApiOperation({ summary, description }),
    ApiResponse({ status: 200, type }),
    ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND'),
  );
