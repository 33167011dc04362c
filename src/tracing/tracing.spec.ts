import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { Coalescer } from '../common/coalescer';
import { startTracing, Tracing } from './start-tracing';
import { currentContext, traceBatch, traceRedisCall } from './tracing';
import { TracingSettings } from './tracing.settings';

const settings = (fields: Partial<TracingSettings> = {}): TracingSettings =>
  Object.assign(new TracingSettings(), fields);

/** The tracing primitives with a real tracer and an in-memory exporter (the Redis calls are stand-ins). */
describe('tracing', () => {
  // A shut-down exporter takes no more spans: one per test, as each test's provider shuts its own down.
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((span) => span.name === name);
  const parentOf = (span: ReadableSpan) =>
    spans().find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);
  /** Runs `work` inside a request-like span named `name`, ended when the work is. */
  const inRequest = <T>(name: string, work: () => Promise<T>): Promise<T> =>
    trace.getTracer('test').startActiveSpan(name, (span) => work().finally(() => span.end()));

  /** Increments coalesced per board, each batch one traced Redis call answering what it was sent. */
  const tracedCoalescer = () =>
    new Coalescer<number, number>({ delayMs: 5, maxBatch: 10 }, (_key, requests) =>
      traceRedisCall(
        'tbRankIncrement',
        () => '{b}',
        async () => requests,
      ),
    );

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });

  afterEach(async () => {
    await tracing?.shutdown();
    // Each test registers its own provider: the global one (the request stand-ins' tracer) is reset.
    trace.disable();
    context.disable();
  });

  it('a Redis call outside any request (a background job) makes no span by default', async () => {
    tracing = startTracing(settings(), exporter);
    await traceRedisCall(
      'tbSweep',
      () => '{b}',
      () => Promise.resolve(1),
    );
    await traceBatch('coalesced call', [currentContext()], () =>
      traceRedisCall(
        'tbSweep',
        () => '{b}',
        async () => 1,
      ),
    );
    expect(spans()).toEqual([]);
  });

  it('with TRACE_BACKGROUND_JOBS=true a background Redis call is a root span', async () => {
    tracing = startTracing(settings({ TRACE_BACKGROUND_JOBS: 'true' }), exporter);
    await traceRedisCall(
      'tbSweep',
      () => '{b}',
      () => Promise.resolve(1),
    );
    expect(spans().map((span) => [span.name, span.parentSpanContext])).toEqual([['tbSweep', undefined]]);
  });

  it("a coalesced call carrying one request runs in that request's trace: the Redis span is its child", async () => {
    tracing = startTracing(settings(), exporter);
    const coalescer = tracedCoalescer();
    await inRequest('POST increment', () => coalescer.submit('b', 1));
    const [redis] = named('tbRankIncrement');
    expect(parentOf(redis)?.name).toBe('POST increment');
    expect(named('coalesced call')).toEqual([]);
  });

  it("a call carrying three requests: each request's trace has its share, the Redis call sits under one", async () => {
    tracing = startTracing(settings(), exporter);
    const coalescer = tracedCoalescer();
    await Promise.all([1, 2, 3].map((n) => inRequest(`request ${n}`, () => coalescer.submit('b', n))));
    const shares = named('coalesced call: share');
    expect(shares.map((share) => parentOf(share)?.name).sort()).toEqual(['request 1', 'request 2', 'request 3']);
    const [batch] = named('coalesced call');
    expect(parentOf(batch)?.name).toBe('coalesced call: share');
    expect(parentOf(named('tbRankIncrement')[0])).toBe(batch);
    const batchId = batch.spanContext().spanId;
    const linkedBack = shares.filter((share) => share.links.some((link) => link.context.spanId === batchId));
    expect(linkedBack).toHaveLength(2);
    expect(batch.links).toHaveLength(2);
    expect(batch.attributes['trendboard.batch.size']).toBe(3);
  });

  it('a failed call marks the batch and every share as errors', async () => {
    tracing = startTracing(settings(), exporter);
    const run = (n: number) =>
      inRequest(`request ${n}`, () =>
        traceBatch('shared read', [currentContext(), context.active()], () => Promise.reject(new Error('down'))),
      );
    await expect(run(1)).rejects.toThrow('down');
    const failed = spans().filter((span) => span.name.startsWith('shared read'));
    expect(failed.map((span) => span.status.code)).toEqual([2, 2, 2]);
  });

  it('the boot line says where traces go, the service name, the sampler and the background rule', () => {
    tracing = startTracing(settings({ OTEL_TRACES_EXPORTER: 'none' }));
    expect(tracing.describe).toMatch(/^traces off \(OTEL_TRACES_EXPORTER=console prints them/);
    const otlp = startTracing(
      settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'boards-eu' }),
    );
    expect(otlp.describe).toBe(
      'traces to OTLP/HTTP http://collector:4318/v1/traces: service boards-eu, sampler parentbased_always_on, background jobs not traced',
    );
    void otlp.shutdown();
    const console = startTracing(
      settings({
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
    );
    expect(console.describe).toBe(
      'traces to standard output (OTEL_TRACES_EXPORTER=console: a tree per trace): service trendboard, sampler traceidratio 0.1, background jobs not traced',
    );
    void console.shutdown();
  });
});
