import { TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { useSingleNodeApp } from '../support/e2e';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const JSON_TYPE = { 'content-type': 'application/json' };
const WRITER = 'trace-writer-0123456789';

/** Traces with an in-memory exporter: a span per request, a child per script call (coalescing: src/tracing/tracing.spec.ts). */
describe('traces (OpenTelemetry, in-memory exporter)', () => {
  const exporter = new InMemorySpanExporter();
  const e2e = useSingleNodeApp({
    spanExporter: exporter,
    boards: ['b'],
    env: { API_KEYS: `${WRITER}:read+write`, PUBLIC_READS: 'true' },
  });
  const { http } = e2e;
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((span) => span.name === name);
  const childrenOf = (parent: ReadableSpan) =>
    spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);

  beforeEach(() => exporter.reset());

  it("an increment with a valid key: the request's span continues the caller's trace; its Redis call is a child", async () => {
    await http()
      .post('/boards/b/items/secret-item/increment')
      .set({ ...JSON_TYPE, 'x-api-key': WRITER, traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` })
      .send({ amount: 2 })
      .expect(200);
    const [server] = named('POST /boards/:board/items/:item/increment');
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(server.attributes).toMatchObject({ 'http.route': '/boards/:board/items/:item/increment' });
    expect(server.attributes['http.response.status_code']).toBe(200);

    // Alone in its coalescing window: the call runs in the request's own trace (issue #47).
    const [script] = childrenOf(server);
    expect(script.name).toBe('tbRankIncrement');
    expect(script.attributes).toMatchObject({
      'db.system.name': 'redis',
      'trendboard.redis.hash_tag': `{${e2e.redis().prefix}board:b}`,
    });
    // Keys and values never reach a span: the item id is nowhere in any attribute.
    for (const span of spans()) expect(JSON.stringify(span.attributes)).not.toContain('secret-item');
  });

  it('a top read: the script call is a child of the request', async () => {
    await http().get('/boards/b/top?limit=3').expect(200);
    const [server] = named('GET /boards/:board/top');
    expect(server.parentSpanContext).toBeUndefined();
    expect(childrenOf(server).map((span) => span.name)).toEqual(['tbRankReadTop']);
  });

  describe('issue #45 row 16: the trace context of a caller without a valid credential is not trusted', () => {
    const sent = (flags: string) => ({
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-${flags}`,
      tracestate: 'vendor=steered',
    });
    const untrusted = (server: ReadableSpan) => ({
      traceId: server.spanContext().traceId === TRACE_ID ? 'the sent one' : 'its own',
      parent: server.parentSpanContext?.spanId ?? null,
      traceState: server.spanContext().traceState?.serialize() ?? null,
      links: server.links.map((link) => [link.context.traceId, link.context.spanId, link.context.traceState ?? null]),
    });
    const expected = {
      traceId: 'its own',
      parent: null,
      traceState: null,
      links: [[TRACE_ID, CALLER_SPAN_ID, null]],
    };

    it('an anonymous read starts a new root linked to the sent span, without its tracestate', async () => {
      await http().get('/boards/b/top?limit=3').set(sent('01')).expect(200);
      const [server] = named('GET /boards/:board/top');
      expect(untrusted(server)).toEqual(expected);
      expect(childrenOf(server).map((span) => span.name)).toEqual(['tbRankReadTop']);
    });

    it('flags 00 from an anonymous caller do not hide its request from the traces', async () => {
      await http().get('/boards/b/top?limit=3').set(sent('00')).expect(200);
      const [server] = named('GET /boards/:board/top');
      expect(untrusted(server)).toEqual(expected);
      expect(server.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    });

    it('an unknown key is no credential: its refused write starts a new root too', async () => {
      await http()
        .post('/boards/b/items/x/increment')
        .set({ ...JSON_TYPE, 'x-api-key': 'not-a-key-0123456789', ...sent('00') })
        .send({})
        .expect(401);
      const [server] = named('POST /boards/:board/items/:item/increment');
      expect(untrusted(server)).toEqual(expected);
    });
  });
});
