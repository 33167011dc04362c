import { TIMEOUT_MESSAGE } from '../common/redis-errors';
import { withDeadline } from './deadline';

/** A promise settled from outside, as a Redis reply is. */
function reply<T>() {
  let settle!: (value: T) => void;
  let fail!: (error: Error) => void;
  const pending = new Promise<T>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { pending, settle, fail };
}

/** Where a deadlined call stands after the microtasks run. */
async function stateOf(call: Promise<unknown>): Promise<string> {
  let state = 'pending';
  call.then(
    (value) => (state = `resolved ${String(value)}`),
    (error: Error) => (state = `rejected ${error.message}`),
  );
  await Promise.resolve();
  await Promise.resolve();
  return state;
}

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers the reply that came in time, and never times it out afterwards', async () => {
    const r = reply<string>();
    const call = withDeadline(r.pending, 101);
    jest.advanceTimersByTime(100);
    r.settle('ok');
    expect(await stateOf(call)).toBe('resolved ok');
    jest.advanceTimersByTime(1000);
    expect(await stateOf(call)).toBe('resolved ok');
  });

  it("passes a reply's error on", async () => {
    const r = reply<string>();
    const call = withDeadline(r.pending, 102);
    r.fail(new Error('WRONGTYPE'));
    expect(await stateOf(call)).toBe('rejected WRONGTYPE');
  });

  it('times out each call at its own deadline, whatever the calls around it do', async () => {
    const first = reply<string>();
    const firstCall = withDeadline(first.pending, 100);
    jest.advanceTimersByTime(40);
    const answered = reply<string>();
    const answeredCall = withDeadline(answered.pending, 100);
    const second = reply<string>();
    const secondCall = withDeadline(second.pending, 100);
    const other = reply<string>();
    const otherTimeout = withDeadline(other.pending, 30);
    answered.settle('ok');
    jest.advanceTimersByTime(29);
    expect(await stateOf(otherTimeout)).toBe('pending');
    jest.advanceTimersByTime(1);
    expect(await stateOf(otherTimeout)).toBe(`rejected ${TIMEOUT_MESSAGE}`);
    jest.advanceTimersByTime(29); // t = 99
    expect(await stateOf(firstCall)).toBe('pending');
    jest.advanceTimersByTime(1); // t = 100
    expect(await stateOf(firstCall)).toBe(`rejected ${TIMEOUT_MESSAGE}`);
    expect(await stateOf(secondCall)).toBe('pending');
    jest.advanceTimersByTime(39); // t = 139
    expect(await stateOf(secondCall)).toBe('pending');
    jest.advanceTimersByTime(1); // t = 140
    expect(await stateOf(secondCall)).toBe(`rejected ${TIMEOUT_MESSAGE}`);
    expect(await stateOf(answeredCall)).toBe('resolved ok');
  });

  it('keeps up with thousands of calls, answered and not, in deadline order', async () => {
    const calls: Array<Promise<number>> = [];
    for (let i = 0; i < 3000; i++) {
      const r = reply<number>();
      calls.push(withDeadline(r.pending, 50));
      if (i % 3 !== 0) r.settle(i);
      await Promise.resolve(); // the reply's handlers run, as between two events
      if (i % 100 === 99) jest.advanceTimersByTime(1); // 30 ms over the calls: the first fall due meanwhile
    }
    jest.advanceTimersByTime(50);
    const states = await Promise.all(calls.map(stateOf));
    states.forEach((state, i) => expect(state).toBe(i % 3 === 0 ? `rejected ${TIMEOUT_MESSAGE}` : `resolved ${i}`));
  });
});
