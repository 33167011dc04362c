import { type Applied, ERROR_TABLE, type ErrorCode } from './generated/errors.js';

/**
 * Codes of failures that never got an answer from the service. Both leave the write's fate unknown
 * (applied: 'maybe'), and repeating a retry-safe call with its Idempotency-Key settles it.
 */
export type ClientErrorCode =
  /** The connection failed, was reset, or closed before the whole answer came. */
  | 'CONNECTION_ERROR'
  /** An attempt took longer than `timeoutMs`. */
  | 'TIMEOUT'
  /** An answer the service's contract does not describe (no JSON error body, e.g. from a proxy). */
  | 'UNEXPECTED_ANSWER';

export interface TrendboardErrorFields {
  code: ErrorCode | ClientErrorCode;
  /** The HTTP status; 0 when no answer came. */
  status: number;
  message: string;
  requestId?: string;
  /** Seconds the service asked to wait (Retry-After), when it sent one. */
  retryAfterSec?: number;
  cause?: unknown;
}

/** The one error every client call throws (an aborted call rethrows its signal's reason instead). */
export class TrendboardError extends Error {
  readonly code: ErrorCode | ClientErrorCode;
  readonly status: number;
  /** Whether repeating the same request may succeed (from the service's error table). */
  readonly retryable: boolean;
  /** Whether the write took effect (from the service's error table): 'maybe' when no answer came. */
  readonly applied: Applied;
  /** The service's X-Request-Id for this answer: what its logs are keyed by. */
  readonly requestId?: string;
  readonly retryAfterSec?: number;
  /** The service's advice for this code, from its error table. */
  readonly advice: string;

  constructor(fields: TrendboardErrorFields) {
    super(fields.message, { cause: fields.cause });
    this.name = 'TrendboardError';
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.retryAfterSec = fields.retryAfterSec;
    const known = knownCode(fields.code);
    if (known) {
      this.retryable = ERROR_TABLE[known].retryable;
      this.applied = ERROR_TABLE[known].applied;
      this.advice = ERROR_TABLE[known].advice;
    } else {
      // No answer, or one the contract does not describe: a gateway's 502/503/504 or a 429 is worth
      // another try; whether a write took effect is unknown unless the request never left.
      this.retryable = fields.status === 0 || [429, 502, 503, 504].includes(fields.status);
      this.applied = fields.status === 429 ? 'no' : 'maybe';
      this.advice = this.retryable ? 'yes: with the same Idempotency-Key' : 'no';
    }
  }
}

function knownCode(code: string): ErrorCode | undefined {
  return Object.hasOwn(ERROR_TABLE, code) ? (code as ErrorCode) : undefined;
}

/** Reads an error answer: the service's JSON body `{ statusCode, message, error, code }`, or whatever came. */
export async function errorOfAnswer(response: Response): Promise<TrendboardError> {
  const text = await response.text().catch(() => '');
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const retryAfterSec = retryAfterOf(response.headers.get('retry-after'));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isErrorBody(body)) {
    return new TrendboardError({
      code: body.code,
      status: response.status,
      message: body.message,
      requestId,
      retryAfterSec,
    });
  }
  return new TrendboardError({
    code: 'UNEXPECTED_ANSWER',
    status: response.status,
    message: `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    requestId,
    retryAfterSec,
  });
}

function isErrorBody(body: unknown): body is { code: ErrorCode; message: string } {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message } = body as { code?: unknown; message?: unknown };
  return typeof code === 'string' && knownCode(code) !== undefined && typeof message === 'string';
}

/** Retry-After is seconds, or an HTTP date (RFC 9110); either becomes seconds from now. */
export function retryAfterOf(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
