import { applyDecorators, HttpCode, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiProperty, ApiResponse } from '@nestjs/swagger';
import { AdminGuard } from './admin.guard';
import { ERROR_CODES, ErrorCode } from './errors';

/** The body of every error answer (see the README's "Errors and retries"). */
export class ErrorBodyDto {
  @ApiProperty({ example: 404 }) statusCode!: number;
  @ApiProperty({
    description: 'What went wrong, naming the field or the resource',
    example: 'board "x" does not exist',
  })
  message!: string;
  @ApiProperty({ example: 'Not Found' }) error!: string;
  @ApiProperty({ enum: Object.keys(ERROR_CODES), description: 'Stable machine code: act on it, not on the message' })
  code!: ErrorCode;
}

/** An error answer with its codes listed in the description. */
export const ErrorResponse = (status: number, description: string) =>
  ApiResponse({ status, description, type: ErrorBodyDto });

/** An /admin route: bearer token required (401 missing, 403 wrong, 503 when no token is configured). */
export const AdminRoute = () =>
  applyDecorators(
    UseGuards(AdminGuard),
    ApiBearerAuth(),
    ErrorResponse(401, 'ADMIN_TOKEN_MISSING'),
    ErrorResponse(403, 'ADMIN_TOKEN_INVALID'),
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
  );

/** A write to a board's items: 200 with `type`, 404 unknown board, 409 the board changed under the request. */
export const BoardWrite = (summary: string, description: string, type: new () => object) =>
  applyDecorators(
    HttpCode(200),
    RetrySafe(),
    ApiOperation({ summary, description }),
    ApiResponse({ status: 200, type }),
    ErrorResponse(404, 'BOARD_NOT_FOUND'),
    ErrorResponse(
      409,
      'CONFIG_CHANGED (nothing applied: retry), BOARD_INCOMPLETE, WRITE_APPLIED_RANK_UNKNOWN (applied: do not repeat), BATCH_PARTIAL',
    ),
  );

/** A read of one window of a board: 200 with `type`, 404 unknown board or window. */
export const WindowRead = (summary: string, description: string, type: new () => object) =>
  applyDecorators(
    ApiOperation({ summary, description }),
    ApiResponse({ status: 200, type }),
    ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND'),
  );
