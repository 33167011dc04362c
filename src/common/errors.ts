type Applied = 'yes' | 'no' | 'maybe' | 'partly';

/** A code whose request was refused: nothing applied. */
function refused<const S extends number>(status: S, retry: string) {
  return { status, applied: 'no', retry } as const;
}

/**
 * Every machine code an error body carries, with its HTTP status and what a client should do. The
 * README's "Errors and retries" table is checked against this list by a test.
 *
 * applied: whether the write took effect ('maybe' only when the answer was lost: Redis timed out).
 * retry:   whether repeating the same request is right.
 */
export const ERROR_CODES = {
  INVALID_INPUT: refused(400, 'no: fix the request; the message names the field'),
  UNKNOWN_METRIC: refused(400, "no: name one of the board's metrics (the message lists them), or none"),
  GROUP_MEMBER_UNSUPPORTED: refused(
    400,
    'no: a group board ranks groups of a member board without a tiebreak or metrics; name another member board',
  ),
  BOARD_WRITE_TOO_COSTLY: refused(
    400,
    'no: one write of the board would pass WRITE_COST_PER_CALL; declare fewer windows, views, segments or options',
  ),
  ADMIN_TOKEN_MISSING: refused(401, 'no: send Authorization: Bearer <ADMIN_TOKEN>'),
  API_KEY_MISSING: refused(
    401,
    'no: send an API key (Authorization: Bearer <key> or X-Api-Key) with the scope the message names',
  ),
  API_KEY_INVALID: refused(401, 'no: the key is not known (wrong, or revoked)'),
  METRICS_TOKEN_MISSING: refused(401, 'no: send Authorization: Bearer <METRICS_TOKEN>'),
  ADMIN_TOKEN_INVALID: refused(403, 'no: the token is wrong'),
  METRICS_TOKEN_INVALID: refused(403, 'no: the token is wrong'),
  API_KEY_SCOPE: refused(
    403,
    'no: the key lacks the scope, or the name is outside its prefixes (the message says which)',
  ),
  RETRACTED: refused(403, "later: the actor's events are blocked by a retraction until the time the message names"),
  BOARD_NOT_FOUND: refused(404, 'no: create the board first'),
  RETRACTION_NOT_FOUND: refused(404, 'no: unknown id, or finished more than 7 days ago'),
  WINDOW_NOT_FOUND: refused(404, 'no: the message lists the windows'),
  COUNTER_NOT_FOUND: refused(404, 'no'),
  API_KEY_NOT_FOUND: refused(404, 'no'),
  STATS_NOT_FOUND: refused(404, 'no: nothing recorded in that hour'),
  SNAPSHOT_NOT_FOUND: refused(
    404,
    'no: the window keeps no snapshots, or none is kept for that time (the message says which)',
  ),
  ARCHIVE_NOT_FOUND: refused(
    404,
    'no: the window keeps no archive, or none of the period asked for (the message says which)',
  ),
  INGEST_SOURCE_NOT_FOUND: refused(404, 'no'),
  ITEM_NOT_FOUND: refused(
    404,
    'no: data is kept only for an item some window of the board holds; write to the item first',
  ),
  LEAGUE_NOT_FOUND: refused(404, 'no: the board has no leagues, or no tier of that name (the message says which)'),
  ROUTE_NOT_FOUND: refused(404, 'no: no such route'),
  METHOD_NOT_ALLOWED: refused(405, 'no: the path takes only the methods its Allow header lists'),
  REQUEST_TIMEOUT: refused(408, 'yes, sent promptly: the headers or body came too slowly; the connection was closed'),
  BOARD_CONFIG_CONFLICT: refused(
    409,
    "no: a window or the shard count would change; ?reset=true drops that data (never a leagues board's window or shards)",
  ),
  BOARD_BEING_DELETED: refused(409, 'yes, after a moment: a deleted board of this name still has keys being dropped'),
  API_KEY_EXISTS: refused(409, 'no: pick another name, or delete the key first'),
  API_KEYS_FULL: refused(409, 'no: delete unused keys first'),
  CONFIG_CHANGED: refused(409, 'yes: the board changed during the request'),
  BOARD_INCOMPLETE: refused(
    409,
    'after repeating the board PUT: a shard has no config (a PUT in progress or one that failed)',
  ),
  WRITE_APPLIED_RANK_UNKNOWN: {
    status: 409,
    applied: 'yes',
    retry: 'no: the write was applied, only its board-wide rank could not be read; read the item instead',
  },
  BOARD_FULL: refused(
    409,
    'no: the board holds its maxItems items; existing items keep counting, new ones wait until some leave every window',
  ),
  AGGREGATE_MISMATCH: refused(
    409,
    'no: a max/min/last board takes scores (POST .../score), a sum board increments and likes',
  ),
  GROUP_BOARD_READ_ONLY: refused(
    409,
    "no: a group board's scores come from its member board; write to the member board (groupOf.board) and set memberships",
  ),
  SEGMENT_LIMIT: refused(
    409,
    'no: the board holds segments.max live segments; a new one waits until one of them holds no live data',
  ),
  ACTOR_WEIGHTS_FULL: refused(
    409,
    'no: the board holds its most weighed actors; set one back to weight 1 (which frees its place) first',
  ),
  ALIASES_FULL: refused(409, 'no: the board holds its most aliases; an alias is kept for good'),
  ALIAS_CONFLICT: refused(
    409,
    'no: the alias names another item already, or other aliases name it as their canonical item (no chains)',
  ),
  ACTOR_COUNTS_PENDING: refused(
    409,
    "no: the window's actor counts began after some of its live data; read without minActors, or reset the window",
  ),
  LIKE_TAKE_BACK_PENDING: refused(
    409,
    'yes: an unlike of this like is still taking it out of its segments (sent again, the like finishes it first)',
  ),
  MODERATED_GROUPS_FULL: refused(
    409,
    'no: the board holds its most moderated groups; clear one (DELETE .../moderation/groups/:group) first',
  ),
  INGEST_SOURCE_CONFLICT: refused(
    409,
    'no: a source of another kind has that name; delete it first or pick another name',
  ),
  INGEST_SOURCES_FULL: refused(409, 'no: delete a source first'),
  CAPACITY_REACHED: refused(
    409,
    'later: the service holds MAX_COUNTERS counters or MAX_STATS_PAIRS pairs; existing ones keep counting',
  ),
  BATCH_PARTIAL: {
    status: 409,
    applied: 'partly',
    retry: 'only the entries the message says were not applied',
  },
  BODY_TOO_LARGE: refused(413, 'no: send a smaller body'),
  DATA_TOO_LARGE: refused(413, 'no: item data holds at most 1 024 bytes of JSON'),
  URI_TOO_LONG: refused(414, 'no'),
  UNSUPPORTED_MEDIA_TYPE: refused(415, 'no: send application/json'),
  IDEMPOTENCY_KEY_REUSED: refused(422, 'no: the key was used for a different request; use a new key'),
  SPAN_TOO_COSTLY: refused(
    422,
    'no: the span holds more slot fields than one read sums; declare a window of that period (the message says which)',
  ),
  REQUEST_TOO_COSTLY: refused(422, 'no: the request would hold Redis past its bound; send what the message says fits'),
  RATE_LIMITED: refused(429, 'yes, after Retry-After seconds'),
  STREAM_LIMIT: refused(
    429,
    'after closing another stream: this client (API key, else address) holds its most live streams',
  ),
  STREAM_SEGMENT_LIMIT: refused(
    429,
    "later: this board's streams watch their most segments here; watch one of those, or the whole board",
  ),
  QUOTA_EXCEEDED: refused(
    429,
    'yes, after Retry-After seconds: the client created its quota of new entries; existing ones keep counting',
  ),
  HEADERS_TOO_LARGE: refused(431, 'no'),
  REDIS_FULL: refused(
    507,
    'yes, later: Redis reached maxmemory; reads still answer and expiry frees memory as windows move on',
  ),
  INTERNAL: { status: 500, applied: 'maybe', retry: 'no: a bug; report it with the request id' },
  ADMIN_DISABLED: refused(503, 'no: the operator has not set ADMIN_TOKEN'),
  REDIS_UNAVAILABLE: {
    status: 503,
    applied: 'maybe',
    retry: 'yes, after Retry-After; a write may have been applied before Redis stopped answering',
  },
  REDIS_BUSY: refused(503, 'yes, after Retry-After: this instance had too much Redis work in flight and sent nothing'),
  NOT_READY: refused(503, 'yes: a dependency is down (the message names it)'),
  WINDOW_DRAINING: refused(
    503,
    'yes, after Retry-After: an expired slot of the window is still being drained, and a read answers only exact listings',
  ),
  SPAN_READS_BUSY: refused(
    503,
    'yes, after Retry-After: the window holds its most filtered span reads in progress, or a read outlived its staged sums',
  ),
  STREAM_CAPACITY: refused(503, 'yes, later or on another instance: this instance serves its most live streams'),
} as const satisfies Record<string, { status: number; applied: Applied; retry: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Codes a Nest or Fastify error without one of ours gets, by status. */
export const CODE_OF_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'INVALID_INPUT',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'BODY_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

/** Domain errors: services throw these; the error filter answers the status of their code. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

type CodeWithStatus<S extends number> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never;
}[ErrorCode];

export class NotFoundError extends DomainError {
  constructor(code: CodeWithStatus<404>, message: string) {
    super(code, message);
  }
}

export class ConflictError extends DomainError {
  constructor(code: CodeWithStatus<409>, message: string) {
    super(code, message);
  }
}

export class InvalidInputError extends DomainError {
  constructor(message: string) {
    super('INVALID_INPUT', message);
  }
}

/** A refusal answered as 401/403/503 by a guard. */
export class AccessError extends DomainError {
  constructor(
    code:
      | 'ADMIN_TOKEN_MISSING'
      | 'ADMIN_TOKEN_INVALID'
      | 'ADMIN_DISABLED'
      | 'API_KEY_MISSING'
      | 'API_KEY_INVALID'
      | 'API_KEY_SCOPE'
      | 'METRICS_TOKEN_MISSING'
      | 'METRICS_TOKEN_INVALID',
    message: string,
  ) {
    super(code, message);
  }
}

export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super('RATE_LIMITED', message);
  }
}

/** A write that would create more new entries than its client's quota allows now (nothing applied). */
export class QuotaExceededError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super('QUOTA_EXCEEDED', message);
  }
}

export class NotReadyError extends DomainError {
  constructor(
    message: string,
    readonly details: object,
  ) {
    super('NOT_READY', message);
  }
}

/** Load shedding: this instance has REDIS_MAX_PENDING_COMMANDS unanswered, so the request sends nothing. */
export class RedisBusyError extends DomainError {
  constructor(message: string) {
    super('REDIS_BUSY', message);
  }
}

/**
 * Redis is away (not connected yet, or the connection lost): the call got no answer. `cause` keeps
 * ioredis' own error. The HTTP edge answers it 503 REDIS_UNAVAILABLE; in process it is what a
 * service of the library rejects with.
 */
export class RedisUnavailableError extends DomainError {
  constructor(message: string, cause: unknown) {
    super('REDIS_UNAVAILABLE', message);
    this.cause = cause;
  }
}

/** A read whose window still held expired data after its drain calls: it answers nothing rather than count it. */
/** A `?span=` read that would sum more slot fields than one read may. */
export class SpanTooCostlyError extends DomainError {
  constructor(message: string) {
    super('SPAN_TOO_COSTLY', message);
  }
}

/** A filtered read over a span while its window holds its most staged span reads (SPAN_STAGED_READS_PER_SHARD). */
export class SpanReadsBusyError extends DomainError {
  constructor(message: string) {
    super('SPAN_READS_BUSY', message);
  }
}

/** A board declared (or changed) so that its costliest single write would weigh more than one write call may: nothing stored. */
export class BoardWriteTooCostlyError extends DomainError {
  constructor(message: string) {
    super('BOARD_WRITE_TOO_COSTLY', message);
  }
}

/** A request whose Redis work would pass its bound (a write call past WRITE_COST_PER_CALL, a read past its per-request cost), named in the message: nothing is read or applied. */
export class RequestTooCostlyError extends DomainError {
  constructor(message: string) {
    super('REQUEST_TOO_COSTLY', message);
  }
}

export class WindowDrainingError extends DomainError {
  constructor(message: string) {
    super('WINDOW_DRAINING', message);
  }
}
