import Fastify, { FastifyInstance, LogController } from 'fastify';
import { CompletingLogController } from '../edge/completing-log-controller';
import { addRequestHook, addResponseHook, joinRequestHooks, RequestHook } from './request-hooks';

/** A server with one route, its onRequest hooks counted as Fastify holds them. */
async function serverWith(
  join: boolean,
  hooks: RequestHook[],
): Promise<{ app: FastifyInstance; fastifyHooks: number }> {
  const app = Fastify();
  let fastifyHooks = 0;
  const added = app.addHook.bind(app);
  app.addHook = ((name: string, hook: never) => {
    if (name === 'onRequest') fastifyHooks++;
    return added(name as 'onRequest', hook);
  }) as typeof app.addHook;
  if (join) joinRequestHooks(app);
  for (const hook of hooks) addRequestHook(app, hook);
  app.get('/x', () => ({ ok: true }));
  await app.ready();
  return { app, fastifyHooks };
}

describe('joined request hooks', () => {
  it('run as one Fastify hook, in the order they were added', async () => {
    const ran: string[] = [];
    const hook =
      (name: string): RequestHook =>
      (_request, _reply, done) => {
        ran.push(name);
        done();
      };
    const { app, fastifyHooks } = await serverWith(true, [hook('a'), hook('b'), hook('c')]);
    const answer = await app.inject({ method: 'GET', url: '/x' });
    expect(answer.statusCode).toBe(200);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(fastifyHooks).toBe(1);
  });

  it("take in the server's own callback hooks added before, first, and leave Fastify one hook", async () => {
    const app = Fastify();
    const ran: string[] = [];
    app.addHook('onRequest', function (this: FastifyInstance, _request, _reply, done) {
      ran.push(this === app ? 'before, on the server' : 'before');
      done();
    });
    joinRequestHooks(app);
    addRequestHook(app, (_request, _reply, done) => {
      ran.push('joined');
      done();
    });
    app.get('/x', () => ({ ok: true }));
    await app.ready();
    const hooksSymbol = Object.getOwnPropertySymbols(app).find((key) => key.description === 'fastify.hooks');
    const store = Reflect.get(app, hooksSymbol ?? Symbol()) as { onRequest: unknown[] };
    expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200);
    expect(ran).toEqual(['before, on the server', 'joined']);
    expect(store.onRequest).toHaveLength(1);
  });

  it('leave an async hook added before to Fastify, ahead of the joined ones', async () => {
    const app = Fastify();
    const ran: string[] = [];
    app.addHook('onRequest', async () => {
      ran.push('async');
    });
    joinRequestHooks(app);
    addRequestHook(app, (_request, _reply, done) => {
      ran.push('joined');
      done();
    });
    app.get('/x', () => ({ ok: true }));
    expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200);
    expect(ran).toEqual(['async', 'joined']);
  });

  it('are Fastify hooks of their own on a server that did not join them', async () => {
    const pass: RequestHook = (_request, _reply, done) => done();
    const { fastifyHooks } = await serverWith(false, [pass, pass]);
    expect(fastifyHooks).toBe(2);
  });

  it('stop at an error, passed or thrown, which Fastify answers', async () => {
    const ran: string[] = [];
    const refuse: RequestHook = (_request, _reply, done) => done(Object.assign(new Error('no'), { statusCode: 403 }));
    const thrower: RequestHook = () => {
      throw Object.assign(new Error('broken'), { statusCode: 418 });
    };
    const after: RequestHook = (_request, _reply, done) => {
      ran.push('after');
      done();
    };
    const refused = await (await serverWith(true, [refuse, after])).app.inject({ method: 'GET', url: '/x' });
    const thrown = await (await serverWith(true, [thrower, after])).app.inject({ method: 'GET', url: '/x' });
    expect([refused.statusCode, thrown.statusCode]).toEqual([403, 418]);
    expect(ran).toEqual([]);
  });

  it('stop at a hook that answered, asynchronously too, and run nothing after it', async () => {
    const ran: string[] = [];
    const answerLater: RequestHook = (_request, reply, done) => {
      setImmediate(() => {
        void reply.code(429).send({ later: true });
        done();
      });
    };
    const after: RequestHook = (_request, _reply, done) => {
      ran.push('after');
      done();
    };
    const { app } = await serverWith(true, [answerLater, after]);
    const answer = await app.inject({ method: 'GET', url: '/x' });
    expect(answer.statusCode).toBe(429);
    expect(answer.json()).toEqual({ later: true });
    expect(ran).toEqual([]);
  });

  it("run onResponse as one Fastify hook too, the server's own first, each after the answer is out", async () => {
    const app = Fastify();
    const ran: string[] = [];
    app.addHook('onResponse', (_request, reply, done) => {
      ran.push(`before ${reply.statusCode}`);
      done();
    });
    joinRequestHooks(app);
    const joinedHook =
      (name: string): RequestHook =>
      (_request, reply, done) => {
        ran.push(`${name} ${reply.sent}`);
        done();
      };
    addResponseHook(app, joinedHook('a'));
    addResponseHook(app, joinedHook('b'));
    app.get('/x', () => ({ ok: true }));
    await app.ready();
    const hooksSymbol = Object.getOwnPropertySymbols(app).find((key) => key.description === 'fastify.hooks');
    const store = Reflect.get(app, hooksSymbol ?? Symbol()) as { onResponse: unknown[] };
    expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200);
    expect(ran).toEqual(['before 200', 'a true', 'b true']);
    expect(store.onResponse).toHaveLength(1);
  });

  it("run onResponse in a CompletingLogController, no Fastify hook: the server's own first, then Fastify's line", async () => {
    const ran: string[] = [];
    const completed = jest
      .spyOn(LogController.prototype, 'requestCompleted')
      .mockImplementation((error) => void ran.push(`completion line: ${error?.message}`));
    const logController = new CompletingLogController({ disableRequestLogging: true });
    const app = Fastify({ logger: true, logController });
    app.addHook('onResponse', (_request, reply, done) => {
      ran.push(`before ${reply.statusCode}`);
      done();
    });
    joinRequestHooks(app);
    addResponseHook(app, (_request, reply, done) => {
      ran.push(`joined ${reply.sent}`);
      done(new Error('ends the hooks'));
    });
    addResponseHook(app, (_request, _reply, done) => {
      ran.push('after an error');
      done();
    });
    app.get('/x', () => ({ ok: true }));
    await app.ready();
    const hooksSymbol = Object.getOwnPropertySymbols(app).find((key) => key.description === 'fastify.hooks');
    const store = Reflect.get(app, hooksSymbol ?? Symbol()) as { onResponse: unknown[] };
    expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200);
    expect(ran).toEqual(['before 200', 'joined true', 'completion line: ends the hooks']);
    expect(store.onResponse).toHaveLength(0);
    completed.mockRestore();
  });
});
