import Fastify, { FastifyRequest } from 'fastify';
import { declareRequestFields, routeConfigOf } from './route-config';

/** Reads of Fastify's `routeOptions` getter on `request`, counted by a getter of its own over Fastify's. */
function countRouteOptionsReads(request: FastifyRequest): () => number {
  let reads = 0;
  let owner = Object.getPrototypeOf(request) as object;
  while (!Object.getOwnPropertyDescriptor(owner, 'routeOptions')) owner = Object.getPrototypeOf(owner) as object;
  const getter = Object.getOwnPropertyDescriptor(owner, 'routeOptions')!.get!;
  Object.defineProperty(request, 'routeOptions', {
    get() {
      reads++;
      return getter.call(request) as FastifyRequest['routeOptions'];
    },
  });
  return () => reads;
}

describe('routeConfigOf', () => {
  it("reads the route's config from its context, without building Fastify's routeOptions view", async () => {
    const app = Fastify();
    declareRequestFields(app, ['routeConfigRead']);
    const seen: Array<{ config: unknown; expected: unknown; reads: number }> = [];
    app.get('/x/:id', { config: { marked: true } }, (request) => {
      const reads = countRouteOptionsReads(request);
      const config = routeConfigOf(request);
      const readsByConfigOf = reads();
      seen.push({ config, expected: request.routeOptions.config, reads: readsByConfigOf });
      return { ok: true };
    });
    const answer = await app.inject({ method: 'GET', url: '/x/1' });
    expect(answer.body).toBe('{"ok":true}');
    expect(seen).toHaveLength(1);
    expect(seen[0].config).toBe(seen[0].expected);
    expect(seen[0].config).toMatchObject({ marked: true, url: '/x/:id', method: 'GET' });
    expect(seen[0].reads).toBe(0);
    await app.close();
  });
});
