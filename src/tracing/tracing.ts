import {
  Attributes,
  context,
  Context,
  Link,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  Tracer,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Traces (OpenTelemetry), off until startTracing (src/tracing/start-tracing.ts: the SDK and its
 * exporters, loaded only by an app that starts tracing, never by the library) sets a tracer. Off, every function here
 * is one check of a module variable and calls straight through: no span, no context, no allocation.
 * On: a span per request (its route pattern; an authenticated caller's `traceparent` continues its
 * trace), a child span per Redis script call (its name and the keys' hash tag, never a key or value),
 * and, for a call carrying several requests, a child span per request for its share, linked to the
 * call's span. Redis work outside any request is traced only with TRACE_BACKGROUND_JOBS.
 */
let tracer: Tracer | undefined;
let traceBackground = false;

/**
 * Makes `next` the tracer every function here uses (startTracing, when the app asks for traces);
 * answers what takes it away again, unless another has replaced it since.
 */
export function useTracer(next: Tracer, background: boolean): () => void {
  tracer = next;
  traceBackground = background;
  return () => {
    if (tracer === next) tracer = undefined;
  };
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** What traceRequests asks of the app: whether a request's caller may continue its own trace. */
export interface TraceTrust {
  /** True for a request that presents a valid credential (an API key, ADMIN_TOKEN). */
  trustsTraceContext: (request: FastifyRequest) => boolean;
}

/**
 * A SERVER span per request: named by method and route pattern (never the path's values), ended when
 * the response closes (streams too), its status code recorded. The caller's `traceparent` is its
 * parent only for a caller with a valid credential: anyone else could put its requests into another
 * trace, or hide them with the not-sampled flag. Theirs start a new root, sampled by this service,
 * linked to the sent span (its ids only; `tracestate` and baggage are dropped). The hook runs the rest
 * of the request inside the span's context, so Redis spans become its children.
 */
export function traceRequests(fastify: FastifyInstance, trust: TraceTrust): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const active = tracer;
    if (!active) return done();
    const sent =
      request.headers.traceparent === undefined ? undefined : propagation.extract(ROOT_CONTEXT, request.headers);
    const trusted = sent !== undefined && trust.trustsTraceContext(request);
    const parent = trusted ? sent : ROOT_CONTEXT;
    const route = request.routeOptions.url ?? 'unmatched route';
    const attributes = { 'http.request.method': request.method, 'http.route': route };
    const links = trusted || sent === undefined ? undefined : untrustedLinks(sent);
    const span = active.startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes, links }, parent);
    reply.raw.once('close', () => {
      span.setAttribute('http.response.status_code', reply.raw.statusCode);
      if (reply.raw.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), done);
  });
}

/** A link to the span an untrusted caller named: its trace and span ids, nothing it could steer further. */
function untrustedLinks(sent: Context): Link[] | undefined {
  const spanContext = trace.getSpanContext(sent);
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return undefined;
  const { traceId, spanId } = spanContext;
  return [
    {
      context: { traceId, spanId, traceFlags: TraceFlags.NONE, isRemote: true },
      attributes: { 'trendboard.trace.untrusted': true },
    },
  ];
}

/** The hash tag of a Redis key (`{...}`), which names the board shard or bucket: never the key itself. */
export function hashTagOf(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open, close + 1) : undefined;
}

/**
 * A CLIENT span around a Redis call (a script or function), child of the active span; outside any
 * span (a background job) none, unless TRACE_BACKGROUND_JOBS.
 */
export function traceRedisCall<T>(
  name: string,
  firstKey: () => string | undefined,
  call: () => Promise<T>,
): Promise<T> {
  if (!tracer || !(traceBackground || trace.getSpan(context.active()))) return call();
  const attributes: Attributes = { 'db.system.name': 'redis', 'db.operation.name': name };
  const tag = hashTagOf(firstKey());
  if (tag) attributes['trendboard.redis.hash_tag'] = tag;
  return inSpan(tracer, name, { kind: SpanKind.CLIENT, attributes }, call);
}

/** What a coalesced request carries to the call that sends it: the request's context, when tracing. */
export function currentContext(): Context | undefined {
  return tracer ? context.active() : undefined;
}

/**
 * One call carrying the work of several requests (coalesced writes, shared reads). A lone request's
 * call runs in its own context, so its Redis span is a child of its request. Several: each request
 * gets a child span for its share, ended when the call answers; the call's span is a child of the
 * first share (that trace holds the Redis call) and links every other request, whose share links back
 * to it. Carried by no request (a background job): traced only with TRACE_BACKGROUND_JOBS, as a root.
 */
export function traceBatch<T>(name: string, carried: Array<Context | undefined>, call: () => Promise<T>): Promise<T> {
  const active = tracer;
  if (!active) return call();
  const requests = carried.filter((c): c is Context => c !== undefined && trace.getSpan(c) !== undefined);
  if (requests.length === 0)
    return context.with(ROOT_CONTEXT, () =>
      traceBackground
        ? inSpan(active, name, { kind: SpanKind.INTERNAL, attributes: batchSize(carried) }, call)
        : call(),
    );
  if (carried.length === 1) return context.with(requests[0], call);
  return traceShares(active, name, carried.length, requests, call);
}

function batchSize(carried: unknown[]): Attributes {
  return { 'trendboard.batch.size': carried.length };
}

function traceShares<T>(active: Tracer, name: string, size: number, requests: Context[], call: () => Promise<T>) {
  const attributes = { 'trendboard.batch.size': size };
  const [first, ...others] = requests;
  const firstShare = active.startSpan(`${name}: share`, { kind: SpanKind.INTERNAL, attributes }, first);
  const links: Link[] = others.map((other) => ({ context: trace.getSpanContext(other)! }));
  const batch = active.startSpan(
    name,
    { kind: SpanKind.INTERNAL, attributes, links },
    trace.setSpan(first, firstShare),
  );
  const toBatch: Link[] = [{ context: batch.spanContext() }];
  const shares = [
    firstShare,
    ...others.map((other) =>
      active.startSpan(`${name}: share`, { kind: SpanKind.INTERNAL, attributes, links: toBatch }, other),
    ),
  ];
  const end = (error?: unknown) => {
    for (const span of [batch, ...shares]) {
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
      span.end();
    }
  };
  return context.with(trace.setSpan(first, batch), call).then(
    (value) => {
      end();
      return value;
    },
    (error: unknown) => {
      end(error);
      throw error;
    },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function inSpan<T>(
  active: Tracer,
  name: string,
  options: { kind: SpanKind; attributes?: Attributes; links?: Link[] },
  call: () => Promise<T>,
): Promise<T> {
  return active.startActiveSpan(name, options, (span: Span) =>
    call().then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
        span.end();
        throw error;
      },
    ),
  );
}
