import { TrendboardError } from '../src';
import { retryAfterOf } from '../src/errors';
import { Transport } from '../src/transport';
import { framesOf } from '../src/watch';

/** The client's pure parts: the retry decision and the event-stream parser (no service needed). */
describe('retry decisions', () => {
  const transport = new Transport({
    baseUrl: 'http://tb.invalid/',
    random: () => 0.5,
    baseDelayMs: 100,
    maxRetries: 3,
  });
  const failure = (code: TrendboardError['code'], status: number, retryAfterSec?: number) =>
    new TrendboardError({ code, status, message: code, retryAfterSec });

  it('reads retryable and applied from the generated error table', () => {
    expect(failure('INVALID_INPUT', 400)).toMatchObject({ retryable: false, applied: 'no' });
    expect(failure('REDIS_UNAVAILABLE', 503)).toMatchObject({ retryable: true, applied: 'maybe' });
    expect(failure('WRITE_APPLIED_RANK_UNKNOWN', 409)).toMatchObject({ retryable: false, applied: 'yes' });
    expect(failure('ADMIN_DISABLED', 503)).toMatchObject({ retryable: false });
    expect(failure('CONNECTION_ERROR', 0)).toMatchObject({ retryable: true, applied: 'maybe' });
    expect(failure('UNEXPECTED_ANSWER', 502)).toMatchObject({ retryable: true, applied: 'maybe' });
    expect(failure('UNEXPECTED_ANSWER', 500)).toMatchObject({ retryable: false });
  });

  it('never repeats what the table refuses, nor an unsafe call that may have been applied', () => {
    expect(transport.waitBeforeRetry(failure('INVALID_INPUT', 400), 0, 'safe')).toBeUndefined();
    expect(transport.waitBeforeRetry(failure('IDEMPOTENCY_KEY_REUSED', 422), 0, 'safe')).toBeUndefined();
    expect(transport.waitBeforeRetry(failure('CONNECTION_ERROR', 0), 0, 'unsafe')).toBeUndefined();
    expect(transport.waitBeforeRetry(failure('REDIS_UNAVAILABLE', 503, 1), 0, 'unsafe')).toBeUndefined();
    // A refusal that applied nothing may be repeated even for an unsafe call.
    expect(transport.waitBeforeRetry(failure('REDIS_BUSY', 503, 1), 0, 'unsafe')).toBe(1000);
    expect(transport.waitBeforeRetry(failure('CONNECTION_ERROR', 0), 3, 'safe')).toBeUndefined(); // retries used up
  });

  it("lets a caller's headers replace the client's, whatever their case", () => {
    const keyed = new Transport({ baseUrl: 'http://tb.invalid', apiKey: 'k', headers: { 'X-Trace': '1' } });
    expect(keyed.headersFor('/metrics', { Authorization: 'Bearer m' })).toEqual({
      accept: 'application/json',
      authorization: 'Bearer m',
      'x-trace': '1',
    });
  });

  it('waits Retry-After as given, else full-jitter exponential backoff', () => {
    expect(transport.waitBeforeRetry(failure('RATE_LIMITED', 429, 7), 0, 'safe')).toBe(7000);
    expect([0, 1, 2].map((n) => transport.waitBeforeRetry(failure('CONNECTION_ERROR', 0), n, 'safe'))).toEqual([
      50, 100, 200,
    ]);
    expect(retryAfterOf('3')).toBe(3);
    expect(retryAfterOf('Wed, 25 Nov 2026 03:00:10 GMT', Date.parse('2026-11-25T03:00:00Z'))).toBe(10);
    expect(retryAfterOf('soon')).toBeUndefined();
  });
});

describe('event-stream frames', () => {
  const parse = async (chunks: string[]) => {
    const bytes = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(bytes.encode(chunk));
        controller.close();
      },
    });
    const frames = [];
    for await (const frame of framesOf(body, () => undefined)) frames.push(frame);
    return frames;
  };

  it('parses fields, comments, multi-line data and CRLF split across chunks', async () => {
    expect(
      await parse([
        'retry: 1000\n\n: heartbeat\n\nid: 7\r',
        '\nevent: top\r\ndata: {"a":\ndata: 1}\r\n\r\n',
        'data:x\n',
      ]),
    ).toEqual([
      { event: 'message', retry: 1000, data: undefined, id: undefined },
      { event: 'top', id: '7', data: '{"a":\n1}', retry: undefined },
    ]); // the unterminated last frame is not dispatched
  });
});
