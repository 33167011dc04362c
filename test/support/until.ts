/**
 * Polls `probe` until it answers a value, for what a test waits on in real time (a stream consumer,
 * a refresh on a timer); fails naming `what` after `timeoutMs`.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 15_000, everyMs = 50 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
