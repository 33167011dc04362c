import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, DomainError, InvalidInputError, NotFoundError } from './errors';
import { isRedisUnavailableError } from './redis-errors';

const DOMAIN_STATUS: Array<[new (...args: never[]) => DomainError, HttpStatus]> = [
  [NotFoundError, HttpStatus.NOT_FOUND],
  [ConflictError, HttpStatus.CONFLICT],
  [InvalidInputError, HttpStatus.BAD_REQUEST],
];

export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
}

/** Maps every error to Nest's `{ statusCode, message, error }`: domain errors to 4xx, Redis outages to 503. */
export function toErrorBody(exception: unknown): ErrorBody {
  if (exception instanceof HttpException) {
    const response = exception.getResponse();
    const status = exception.getStatus();
    if (typeof response === 'object' && response !== null && 'message' in response) {
      const body = response as Partial<ErrorBody>;
      return {
        statusCode: status,
        message: body.message ?? exception.message,
        error: body.error ?? httpReason(status),
      };
    }
    return { statusCode: status, message: String(response), error: httpReason(status) };
  }
  for (const [type, status] of DOMAIN_STATUS) {
    if (exception instanceof type) return { statusCode: status, message: exception.message, error: httpReason(status) };
  }
  if (isRedisUnavailableError(exception)) {
    return { statusCode: 503, message: 'Redis is unreachable; try again shortly', error: 'Service Unavailable' };
  }
  const fastifyStatus = (exception as { statusCode?: unknown })?.statusCode;
  if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
    return { statusCode: fastifyStatus, message: (exception as Error).message, error: httpReason(fastifyStatus) };
  }
  return { statusCode: 500, message: 'Internal server error', error: 'Internal Server Error' };
}

function httpReason(status: number): string {
  const name = HttpStatus[status] ?? 'ERROR';
  return name
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

@Catch()
export class AppErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const body = toErrorBody(exception);
    if (body.statusCode >= 500 && body.statusCode !== 503) {
      // The request's own logger carries its reqId.
      const log = host.switchToHttp().getRequest<FastifyRequest>()?.log;
      if (log) log.error({ err: exception }, 'unhandled error');
      else this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (body.statusCode === 503) reply.header('Retry-After', '1');
    void reply.status(body.statusCode).send(body);
  }
}
