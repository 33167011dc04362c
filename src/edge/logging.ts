import { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import pino, { Logger } from 'pino';
import { writePlainLine } from './plain-line';
import { addRequestHook } from '../common/request-hooks';

const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The process's one pino logger (JSON lines). Fastify logs each request with it through a child
 * logger bound to the request id, so every line of a request carries `reqId`; Nest's own messages go
 * through PinoLoggerService. The level is set from LOG_LEVEL once the config is validated.
 */
export function createRootLogger(destination?: pino.DestinationStream): Logger {
  return pino({ level: 'info', redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] }, destination);
}

/** The first 80 bits of the ids this process makes (a random UUID's, so its version and variant too). */
const MADE_ID_PREFIX = randomUUID().slice(0, 24);
const MADE_ID_COUNT_LIMIT = 2 ** 48;
let madeIdCount = 0;

/**
 * A request id of this process: UUID-shaped, its random prefix and a 48-bit count, so ids are unique
 * across instances (74 random bits each) without a random UUID per request, which was about 1 µs of a
 * hot request's CPU (docs/benchmarks.md). An id only ties lines and answers together; it is no secret.
 */
export function madeRequestId(): string {
  madeIdCount = (madeIdCount + 1) % MADE_ID_COUNT_LIMIT;
  return MADE_ID_PREFIX + madeIdCount.toString(16).padStart(12, '0');
}

/** Fastify's request id: the caller's X-Request-Id when it is sane, else one made here (madeRequestId). */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : madeRequestId();
}

/** Echoes the request id back, so a client can quote it. A callback hook: no promise per request. */
export function echoRequestId(fastify: FastifyInstance): void {
  addRequestHook(fastify, (request, reply, done) => {
    // Lower case, as Fastify stores header names: nothing to lower for each answer.
    void reply.header('x-request-id', request.id);
    done();
  });
}

const LEVEL_NAMES = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type LevelName = (typeof LEVEL_NAMES)[number];
type LevelMethod = (...args: unknown[]) => void;

/**
 * Fastify's per-request logger, made on first use. pino's child() (bindings serialized, options
 * applied) is a measurable share of a hot request's CPU, and at LOG_LEVEL=warn most requests log
 * nothing: a line below the root's level returns at once, and the real child, bound to the request id,
 * is built only when a line is written.
 */
export class LazyRequestLogger {
  private made?: Logger;

  declare fatal: LevelMethod;
  declare error: LevelMethod;
  declare warn: LevelMethod;
  declare info: LevelMethod;
  declare debug: LevelMethod;
  declare trace: LevelMethod;

  // One method body for every level: each writes its own level (write).
  static {
    for (const level of LEVEL_NAMES)
      this.prototype[level] = function (this: LazyRequestLogger, ...args: unknown[]) {
        this.write(level, args);
      };
  }

  constructor(
    private readonly root: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.real().level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  silent(): void {}

  child(bindings: Record<string, unknown>, options?: pino.ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }

  private write(level: LevelName, args: unknown[]): void {
    if (!this.made) {
      if (!this.root.isLevelEnabled(level)) return;
      if (this.writesPlainly(level, args)) return;
    }
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  /** `(fields, msg)` with no child options: written as the child would write it, without making it (writePlainLine). */
  private writesPlainly(level: LevelName, args: unknown[]): boolean {
    // Read by index: destructuring an array runs its iterator.
    const fields = args[0];
    const msg = args[1];
    return (
      args.length === 2 &&
      typeof msg === 'string' &&
      isPlainObject(fields) &&
      !hasChildOptions(this.options) &&
      writePlainLine(this.root, level, this.bindings, fields, msg)
    );
  }

  private real(): Logger {
    this.made ??= this.root.child(this.bindings, this.options);
    return this.made;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Options that would make a child's lines differ from its root's. Fastify passes `{ level }` with the
 * route's level, '' when it has none (lazyChildLogger made a real child for any other).
 */
function hasChildOptions(options: pino.ChildLoggerOptions): boolean {
  for (const key in options)
    if (key !== 'level' && (options as Record<string, unknown>)[key] !== undefined) return true;
  return Boolean(options.level);
}

/**
 * Fastify `childLoggerFactory`: see LazyRequestLogger. A route with a level of its own (Fastify's
 * `logLevel` route option) gets a real child at once, since the root's level says nothing about it.
 */
export function lazyChildLogger(
  logger: unknown,
  bindings: Record<string, unknown>,
  options: pino.ChildLoggerOptions,
): LazyRequestLogger | Logger {
  if (options.level) return (logger as Logger).child(bindings, options);
  return new LazyRequestLogger(logger as Logger, bindings, options);
}

/**
 * The root as Fastify's `loggerInstance`: Fastify makes its own logger from it once (a child with its
 * serializers), and that logger's children are lazyChildLogger's. Given as `childLoggerFactory`
 * instead, lazyChildLogger's child is checked on every request (an array of method names filtered
 * for each); Fastify's own factory, which calls its logger's child(), is not.
 */
export function withLazyChildren(root: Logger): Logger {
  const child = (bindings: pino.Bindings, options?: pino.ChildLoggerOptions) =>
    makingLazyChildren(root.child(bindings, options));
  return Object.assign(Object.create(root) as Logger, { child });
}

/** `logger`, its children made by lazyChildLogger. */
function makingLazyChildren(logger: Logger): Logger {
  const child = (bindings: pino.Bindings, options: pino.ChildLoggerOptions = {}) =>
    lazyChildLogger(logger, bindings, options);
  return Object.assign(Object.create(logger) as Logger, { child });
}

/**
 * Nest's own boot chatter: a line per module loaded and per route mapped (some 40 lines). At debug,
 * so a boot at info is a few lines; the routes are in /docs-json. NestApplication's "successfully started"
 * too: it comes before the port is bound (main.ts logs "ready" once listening succeeded).
 */
const BOOT_DETAIL_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Nest's logger interface over pino: the last string argument is the context, as Nest passes it. */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    this.write(typeof context === 'string' && BOOT_DETAIL_CONTEXTS.has(context) ? 'debug' : 'info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    rest: unknown[],
  ): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const details = rest.slice(0, context === undefined ? rest.length : -1).filter((value) => value !== undefined);
    const fields = { context, ...(details.length > 0 ? { details } : {}) };
    if (message instanceof Error) this.logger[level]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[level]({ ...fields, ...message });
    else this.logger[level](fields, String(message));
  }
}

/**
 * Says why the process could not start, as one JSON line on stderr like every other line (written
 * synchronously: the process exits right after).
 */
export function logBootFailure(error: unknown): void {
  const destination = pino.destination({ fd: 2, sync: true });
  const problems = error instanceof Error ? error.message.split('\n').map((line) => line.trim()) : [String(error)];
  const [summary, ...details] = problems;
  pino({ level: 'info' }, destination).fatal(details.length > 0 ? { problems: details } : {}, summary);
}
