import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  CODE_OF_STATUS,
  DomainError,
  ErrorCode,
  NotReadyError,
  QuotaExceededError,
  RateLimitedError,
} from '../common/errors';
import { noteErrorCode } from '../common/answered-requests';
import { Clock } from '../common/clock';
import { COMMON_MESSAGES } from '../common/common.messages';
import { isRedisFullError, isRedisTimeoutError, isRedisUnavailableError } from '../common/redis-errors';

/** Nest's error shape plus a stable machine `code`; `message` is always one string. */
export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: ErrorCode;
  /** Per-dependency health, on a NOT_READY answer. */
  details?: object;
}

/**
 * A command timeout is not proof that Redis is away: the command may have run, its answer late or
 * stuck behind a stalled event loop. The answer says so, and how to retry safely.
 */
const REDIS_TIMEOUT_MESSAGE =
  'Redis did not answer in time; a write may have been applied: retry it with the same Idempotency-Key';
const REDIS_FULL_MESSAGE = 'Redis is out of memory (maxmemory): writes are refused until expiry frees some';
/** A full Redis refuses every write: one warning per interval says so, not one per request. */
const REDIS_FULL_LOG_INTERVAL_MS = 10_000;

/** Maps every error to an ErrorBody: domain errors by their code, Redis outages to 503, anything else to 500. */
export function toErrorBody(exception: unknown): ErrorBody {
  if (exception instanceof DomainError) {
    const body = bodyOf(exception.status, exception.message, exception.code);
    return exception instanceof NotReadyError ? { ...body, details: exception.details } : body;
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response ? response.message : response;
    return bodyOf(status, messageText(message, exception.message), codeOf(status));
  }
  if (isRedisTimeoutError(exception)) return bodyOf(503, REDIS_TIMEOUT_MESSAGE, 'REDIS_UNAVAILABLE');
  if (isRedisUnavailableError(exception)) return bodyOf(503, COMMON_MESSAGES.redisUnavailable(), 'REDIS_UNAVAILABLE');
  if (isRedisFullError(exception)) return bodyOf(507, REDIS_FULL_MESSAGE, 'REDIS_FULL');
  // Fastify's own refusals (body too large, bad JSON, unsupported media type...) carry a 4xx statusCode.
  const fastifyStatus = (exception as { statusCode?: unknown })?.statusCode;
  if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
    return bodyOf(fastifyStatus, (exception as Error).message, codeOf(fastifyStatus));
  }
  return bodyOf(500, 'Internal server error', 'INTERNAL');
}

function bodyOf(status: number, message: string, code: ErrorCode): ErrorBody {
  return { statusCode: status, message, error: httpReason(status), code };
}

function codeOf(status: number): ErrorCode {
  return CODE_OF_STATUS[status] ?? (status < 500 ? 'INVALID_INPUT' : status === 503 ? 'REDIS_UNAVAILABLE' : 'INTERNAL');
}

/** class-validator answers a list of problems: they become one sentence. */
function messageText(message: unknown, fallback: string): string {
  if (Array.isArray(message)) return message.map(String).join('; ');
  return typeof message === 'string' ? message : fallback;
}

function httpReason(status: number): string {
  const name = HttpStatus[status] ?? 'ERROR';
  return name
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** What an unexpected error logs: never ioredis' `command` (a script's whole source and its arguments). */
function loggable(exception: unknown): object {
  if (!(exception instanceof Error)) return { message: String(exception) };
  return { type: exception.name, message: exception.message, stack: exception.stack };
}

@Catch()
export class AppErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private lastFullLogMs = -Infinity;

  constructor(private readonly clock: Clock) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const body = toErrorBody(exception);
    if (body.code === 'INTERNAL') {
      // The request's own logger carries its reqId.
      const log = host.switchToHttp().getRequest<FastifyRequest>()?.log;
      if (log) log.error({ err: loggable(exception) }, 'unhandled error');
      else this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    if (body.code === 'REDIS_FULL' && this.clock.nowMs() - this.lastFullLogMs >= REDIS_FULL_LOG_INTERVAL_MS) {
      this.lastFullLogMs = this.clock.nowMs();
      this.logger.warn(`${REDIS_FULL_MESSAGE} (logged at most every ${REDIS_FULL_LOG_INTERVAL_MS / 1000} s)`);
    }
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    noteErrorCode(host.switchToHttp().getRequest<FastifyRequest>(), body.code);
    if (body.statusCode === 503) reply.header('Retry-After', '1');
    if (exception instanceof RateLimitedError || exception instanceof QuotaExceededError)
      reply.header('Retry-After', String(exception.retryAfterSec));
    void reply.status(body.statusCode).send(body);
  }
}
