import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { noteReplayed } from '../common/answered-requests';
import { InvalidInputError } from '../common/errors';
import { IDEMPOTENCY_RETENTION_SEC } from '../common/limits';
import { WriteAnswer } from '../common/retry-safe';
import { scopedIdempotencyKey } from '../redis/idempotency';
import { callerOf } from './caller';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** 1-128 printable ASCII characters (space included), as the contract says. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,128}$/;

/** The optional Idempotency-Key header: absent is undefined; malformed (or sent twice) is a 400. */
export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new InvalidInputError('Idempotency-Key must be 1-128 printable ASCII characters');
  }
  return value;
}

/**
 * The request's validated Idempotency-Key scoped to its client (callerOf: its API key, else its
 * address), or undefined. Scoped, a key another client guessed or reused is another key: it can
 * neither replay this client's answers nor have its writes refused as a reuse. Read by the handler
 * from the request it takes, not by a parameter decorator: Nest resolves every decorated parameter
 * through its own chain of pipe promises on every request (about 5 µs of an increment's CPU).
 */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = parseIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]);
  if (key === undefined) return undefined;
  const retentionSec = parseRetention(request.headers[IDEMPOTENCY_RETENTION_HEADER]);
  return scopedIdempotencyKey(callerOf(request).client, key, retentionSec);
}

export const IDEMPOTENCY_RETENTION_HEADER = 'idempotency-retention';

/**
 * The optional Idempotency-Retention header: seconds the answer must be kept for the client's retries
 * (a client retrying within a call's deadline needs a minute, not IDEMPOTENCY_TTL_SEC). A shorter
 * retention costs that share of the stored-answers quota (answerShare). Malformed is a 400.
 */
function parseRetention(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const { min, max } = IDEMPOTENCY_RETENTION_SEC;
  const seconds = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(seconds >= min && seconds <= max))
    throw new InvalidInputError(`Idempotency-Retention must be whole seconds, ${min}-${max}`);
  return seconds;
}

/** Sends a write's body, marking a replay with `Idempotent-Replayed: true` (noted for the answered requests too). */
export function answer<T>(reply: FastifyReply, written: WriteAnswer<T>): T {
  if (written.replayed) {
    void reply.header('Idempotent-Replayed', 'true');
    noteReplayed(reply.request);
  }
  return written.body;
}

/** The request and reply of a retry-safe write: what it is sent with, where its answer goes. */
export interface WriteExchange {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * The handler's WriteExchange, for the retry-safe writes off the hot path: a parameter decorator costs
 * each request about 5 µs (see idempotencyKeyOf), so the @FastRoute() writes take @Req and @Res. The
 * reply is passed through: the handler's result is still sent by Nest.
 */
export const Exchange = createParamDecorator((_data: unknown, context: ExecutionContext): WriteExchange => {
  const http = context.switchToHttp();
  return { request: http.getRequest<FastifyRequest>(), reply: http.getResponse<FastifyReply>() };
});
