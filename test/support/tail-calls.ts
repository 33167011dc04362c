import type { StandingStore } from '../../src/ranking/standing/standing.store';

/** The rows each call of `store`'s functions answers, in the order they answered, until `restore()`. */
export function rowsEachCall(store: StandingStore): { answered: number[]; restore: () => void } {
  const answered: number[] = [];
  const call = store.functions.call.bind(store.functions);
  const spy = jest.spyOn(store.functions, 'call').mockImplementation(async (...args) => {
    const reply = await call(...args);
    answered.push((reply as { rows: unknown[] }).rows.length);
    return reply;
  });
  return { answered, restore: () => spy.mockRestore() };
}
