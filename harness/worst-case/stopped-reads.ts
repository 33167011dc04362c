/**
 * An instance that stops in the middle of filtered span reads: a staging call it sends reaches Redis
 * while it runs, but nothing after (the scan, the drop), so the staged keys stay until
 * SPAN_STAGE_TTL_MS, as a stopped or stalled instance leaves them (the worst-case row of staged keys).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FiltersStore } from '../../src/ranking/filters/filters.store';
import type { HttpAnswer } from './harness-types';

/** Whether a call's input asks span_stage to drop what its token holds. */
function dropping(input: unknown): boolean {
  return typeof input === 'object' && input !== null && 'drop' in input && input.drop === true;
}

/**
 * `send` run on `app` stopped after `stageCalls` staging calls of each read (all of them by default):
 * every later call of the read (the rest of the staging, its scan, its drop) fails before Redis.
 */
export async function stagingStops(
  app: NestFastifyApplication,
  send: () => Promise<HttpAnswer>,
  stageCalls = Infinity,
): Promise<HttpAnswer> {
  const store = app.get(FiltersStore);
  const { functions } = store;
  const call = functions.call;
  const { spanStage, groupPage } = store.fns;
  let staged = 0;
  const stopped = (name: string, input: unknown) =>
    name === spanStage.redisName ? dropping(input) || ++staged > stageCalls : name === groupPage.redisName;
  functions.call = (fn, input) =>
    stopped(fn.redisName, input) ? Promise.reject(new Error('the instance stopped')) : call(fn, input);
  try {
    return await send();
  } finally {
    functions.call = call;
  }
}
