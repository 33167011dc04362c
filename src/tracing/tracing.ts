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
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TracingSettings } from './tracing.settings';

/**
 * Traces (OpenTelemetry), off unless configured: OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over HTTP), or an
 * exporter the caller passes (the tests' in-memory one). Off, every function here is one check of a
 * module variable and calls straight through: no span, no context, no allocation. On: a span per
 * request (its route pattern; an authenticated caller's `traceparent` continues its trace), a child span per Redis
 * script call (its name and the keys' hash tag, never a key or value), and a span per coalesced call
 * linked to every request it carries.
 */
let tracer: Tracer | undefined;

export interface TracingHandle {
  shutdown(): Promise<void>;
}

/** Starts tracing when configured (one traced app per process); answers undefined when tracing stays off. */
export function startTracing(settings: TracingSettings, exporter?: SpanExporter): TracingHandle | undefined {
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return undefined;
  const processor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint!.replace(/\/$/, '')}/v1/traces` }));
  const provider = new NodeTracerProvider({ spanProcessors: [processor] });
  // The context manager (AsyncLocalStorage) and the W3C propagator; the provider's own tracer is used,
  // not the global one, so a second registration in a process (tests) changes nothing already running.
  provider.register();
  tracer = provider.getTracer('trendboard');
  const own = tracer;
  return {
    shutdown: async () => {
      if (tracer === own) tracer = undefined;
      await provider.shutdown();
    },
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

/** A CLIENT span around a Redis call (a script or function), child of the active span. */
export function traceRedisCall<T>(
  name: string,
  firstKey: () => string | undefined,
  call: () => Promise<T>,
): Promise<T> {
  if (!tracer) return call();
  const attributes: Attributes = { 'db.system.name': 'redis', 'db.operation.name': name };
  const tag = hashTagOf(firstKey());
  if (tag) attributes['trendboard.redis.hash_tag'] = tag;
  return inSpan(tracer, name, { kind: SpanKind.CLIENT, attributes }, call);
}

/** What a coalesced request carries to the call that sends it: the request's context, when tracing. */
export function currentContext(): Context | undefined {
  return tracer ? context.active() : undefined;
}

/** A span for one call that carries several requests, linked to each request's span. */
export function traceBatch<T>(name: string, carried: Array<Context | undefined>, call: () => Promise<T>): Promise<T> {
  if (!tracer) return call();
  const links: Link[] = [];
  for (const carriedContext of carried) {
    const spanContext = carriedContext && trace.getSpanContext(carriedContext);
    if (spanContext) links.push({ context: spanContext });
  }
  // The batch is its own root: its requests are linked, none of them is its parent.
  return context.with(ROOT_CONTEXT, () =>
    inSpan(
      tracer!,
      name,
      { kind: SpanKind.INTERNAL, links, attributes: { 'trendboard.batch.size': carried.length } },
      call,
    ),
  );
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
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      },
    ),
  );
}
