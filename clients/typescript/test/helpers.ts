import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** Starts an app listening on a free localhost port; answers its base URL. */
export async function listen(app: NestFastifyApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** A fetch that notes each request's method, URL and headers before sending it with the real fetch. */
export function notingFetch(): { fetch: typeof fetch; sent: Array<{ method: string; url: string; headers: Headers }> } {
  const sent: Array<{ method: string; url: string; headers: Headers }> = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers) });
      return fetch(input, init);
    },
  };
}

/** A seeded [0, 1) generator (mulberry32): the same faults on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
