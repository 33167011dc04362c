/**
 * Filling a limit before the row that measures it: the filling requests are not measured, so they go
 * FILL_IN_FLIGHT at a time rather than one after another (one Redis round trip each way for many, far
 * less of the harness's and Redis's CPU per request). Only requests whose order does not matter: each
 * names its own member, item, alias or actor.
 */
import type { Caller, HarnessContext, HttpAnswer, HttpRequest } from './harness-types';

/** Filling requests in flight at once. */
export const FILL_IN_FLIGHT = 16;

/**
 * Runs task(0) … task(count - 1), FILL_IN_FLIGHT at a time, each wave after the last one's end;
 * answers their results in that order. Stops after the wave where `stop` holds for a result (then
 * fewer than `count` results: every task run).
 */
export async function inWaves<T>(
  count: number,
  task: (n: number) => Promise<T>,
  stop: (result: T) => boolean = () => false,
): Promise<T[]> {
  const results: T[] = [];
  for (let first = 0; first < count; first += FILL_IN_FLIGHT) {
    const wave = await Promise.all(
      Array.from({ length: Math.min(FILL_IN_FLIGHT, count - first) }, (_, k) => task(first + k)),
    );
    results.push(...wave);
    if (wave.some(stop)) break;
  }
  return results;
}

/** Sends request(0) … request(count - 1) as `caller`, in waves (inWaves); their answers in that order. */
export function fill(
  context: HarnessContext,
  count: number,
  request: (n: number) => HttpRequest,
  caller: Caller,
  stop?: (answer: HttpAnswer) => boolean,
): Promise<HttpAnswer[]> {
  return inWaves(count, (n) => context.send(request(n), caller), stop);
}

/** fill(), failing on the first answer of 300 or more (a filled limit short of what its row says). */
export async function fillAll(
  context: HarnessContext,
  count: number,
  request: (n: number) => HttpRequest,
  caller: Caller,
): Promise<void> {
  const answers = await fill(context, count, request, caller);
  const failed = answers.findIndex((answer) => answer.status >= 300);
  if (failed >= 0) {
    const { method, path } = request(failed);
    throw new Error(`filling ${method} ${path}: ${answers[failed].status} ${JSON.stringify(answers[failed].body)}`);
  }
}
