import { applyDecorators, Delete, Get, HttpCode, Post, SetMetadata } from '@nestjs/common';
import { ApiOperation, ApiOperationOptions, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { API_KEY_SCHEME, BEARER_SCHEME } from '../edge/security-schemes';
import { ErrorResponse, RetrySafe, RouteConfigFields } from '../edge/route-decorators';
import { RouteAccess } from './access-rules';

/** Metadata key of a route's access rule (read by AccessGuard and RateLimitGuard). */
export const ACCESS_RULE = 'trendboard:access';

/**
 * What a route needs: every route declares it (AccessGuard refuses a route that does not, so a new
 * route is never open by mistake). `nameParam` names the route parameter a key's name prefixes apply to.
 * On a handler the rule also goes into the Fastify route's config, where AccessGate's onRequest hook
 * reads it before the body is read.
 */
export const Access = (rule: RouteAccess) =>
  rule.scope === 'public'
    ? SetMetadata(ACCESS_RULE, rule)
    : applyDecorators(
        SetMetadata(ACCESS_RULE, rule),
        RouteConfigFields({ access: rule }),
        ApiSecurity(BEARER_SCHEME),
        ApiSecurity(API_KEY_SCHEME),
      );

/** Health probes, the metrics scrape: no key ever. */
export const PublicRoute = () => Access({ scope: 'public' });

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

/**
 * An /admin GET answering 200 with `type`. Its parts are listed bottom-up, as the decorators it stands
 * for were stacked, so the OpenAPI document keeps their order.
 */
export const AdminRead = (path: string, operation: ApiOperationOptions, type: new () => object) =>
  applyDecorators(ApiResponse({ status: 200, type }), ApiOperation(operation), AdminRoute(), Get(path));

/** An /admin DELETE of one named thing: 204 `answered` when done, 404 `notFound` when there is none. */
export const AdminDelete = (path: string, operation: ApiOperationOptions, notFound: string, answered = 'Deleted') =>
  applyDecorators(
    Delete(path),
    AdminRoute(),
    HttpCode(204),
    ApiOperation(operation),
    ApiResponse({ status: 204, description: answered }),
    ErrorResponse(404, notFound),
  );

/**
 * An /admin write to a board that goes on in bounded steps: 202 with `type` once recorded (retry-safe),
 * 400 `invalid`, 404 unknown board. Listed bottom-up, as the decorators it stands for were stacked.
 */
export const AdminBoardSteps = (operation: ApiOperationOptions, type: new () => object, invalid: string) =>
  applyDecorators(
    ErrorResponse(404, 'BOARD_NOT_FOUND'),
    ErrorResponse(400, invalid),
    RetrySafe(),
    ApiResponse({ status: 202, type }),
    ApiOperation(operation),
    HttpCode(202),
    AdminRoute(),
  );

/**
 * A retry-safe write answered 204 `answered`, without a body (a state set or cleared), for the callers
 * `access` admits (AdminRoute(), KeyedRoute(...)).
 */
export const RetrySafeNoContent = (
  access: ReturnType<typeof applyDecorators>,
  operation: ApiOperationOptions,
  answered: string,
) =>
  applyDecorators(
    access,
    HttpCode(204),
    RetrySafe(),
    ApiOperation(operation),
    ApiResponse({ status: 204, description: answered }),
  );

/** A route that needs a key with `scope` once keys exist; name prefixes of a key apply to `nameParam`. */
export const KeyedRoute = (scope: 'read' | 'write', nameParam?: string) =>
  applyDecorators(
    Access({ scope, nameParam }),
    ErrorResponse(401, 'API_KEY_MISSING, API_KEY_INVALID'),
    ErrorResponse(403, 'API_KEY_SCOPE'),
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
      'CONFIG_CHANGED (nothing applied: retry), BOARD_INCOMPLETE, WRITE_APPLIED_RANK_UNKNOWN (applied: do not repeat), BATCH_PARTIAL, BOARD_FULL (a new item beyond maxItems: nothing applied), AGGREGATE_MISMATCH (a score on a sum board, an increment or like on a max/min/last board), GROUP_BOARD_READ_ONLY (a write to a group board)',
    ),
  );

/** GET `path`, a read of one window of a board: 200 with `type`, 404 unknown board or window. */
export const WindowRead = (path: string, summary: string, description: string, type: new () => object) =>
  applyDecorators(
    Get(path),
    KeyedRoute('read', 'board'),
    ApiOperation({ summary, description }),
    ApiResponse({ status: 200, type }),
    ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND'),
  );

/** A read that takes `minActors`: 409 while its window's actor data predates its counts. */
export const MinActorsRead = () =>
  ErrorResponse(409, 'ACTOR_COUNTS_PENDING: minActors on a window whose actor data predates its counts (an upgrade)');

/**
 * POST `path`, a read of one window whose asks travel in the body: 200 (not 201) with `type`, 404
 * unknown board or window. Listed bottom-up, as the decorators it stands for were stacked.
 */
export const PostedWindowRead = (path: string, operation: ApiOperationOptions, type: new () => object) =>
  applyDecorators(
    ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND'),
    ApiResponse({ status: 200, type }),
    ApiOperation(operation),
    HttpCode(200),
    KeyedRoute('read', 'board'),
    Post(path),
  );
