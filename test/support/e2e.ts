import { AddressInfo } from 'node:net';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { Clock } from '../../src/common/clock';
import { AppOptions } from '../../src/bootstrap';
import { createBoard, startTestApp } from './app';
import { FakeClock } from './clock';
import { startTestRedis, TestRedis, Topology } from './redis';

/** The test clock's start unless a file says otherwise: 2023-11-14T22:13:20Z, a whole minute. */
export const T0 = 1_700_000_000_000;

type Env = Record<string, string | undefined>;

export interface E2eOptions {
  /**
   * Settings of the file's app, over startTestApp's defaults; a function gets the file's Redis first
   * (to put a proxy in front of it, say) and is called once, before the first app starts.
   */
  env?: Env | ((redis: TestRedis) => Env | Promise<Env>);
  /** Where the FakeClock starts (default T0); the clock is set back here before each test with `fresh`. */
  startMs?: number;
  /** The app's clock instead of the FakeClock (a SystemClock for tests that wait in real time). */
  clock?: Clock;
  /** Boards made once the app is up (one window: the last hour in 1-minute slots). */
  boards?: string[];
  /** Also listen on a free port of 127.0.0.1 (raw sockets, fetch, SSE): see port(). */
  listen?: boolean;
  /** Before each test: delete the file's keys (boards included: make them in the test) and reset the clock. */
  fresh?: boolean;
  /** No app of the file's own: tests start theirs with startApp, describe blocks with describeApp. */
  noApp?: boolean;
  /** More apps on the same Redis for the whole file, by name, each with settings over `env`: see other(). */
  others?: Record<string, Env>;
  spanExporter?: AppOptions['spanExporter'];
}

export interface E2eContext {
  /** The file's app (not with noApp). */
  app(): NestFastifyApplication;
  /** A supertest request against the file's app. */
  http(): ReturnType<typeof request>;
  redis(): TestRedis;
  /** The port the app listens on (with `listen`). */
  port(): number;
  clock: FakeClock;
  /** Another app on the same Redis with other settings (over the file's `env`), closed after the test. */
  startApp(env?: Env): Promise<NestFastifyApplication>;
  /** The apps this test started with startApp, in the order it started them. */
  started(): NestFastifyApplication[];
  /** One of the apps of `others`. */
  other(name: string): NestFastifyApplication;
  /** An app with other settings on the same Redis for the calling describe block (its own hooks). */
  describeApp(env?: Env): { app(): NestFastifyApplication; http(): ReturnType<typeof request> };
}

/**
 * One private Redis (single node or Cluster) and one app for a test file or describe block: registers
 * its beforeAll/afterAll (and afterEach for the apps a test started) and hands out accessors.
 */
export function useApp(topology: Topology, options: E2eOptions = {}): E2eContext {
  const startMs = options.startMs ?? T0;
  const clock = new FakeClock(startMs);
  let redis: TestRedis | undefined;
  let app: NestFastifyApplication | undefined;
  const extra: NestFastifyApplication[] = [];
  const others = new Map<string, NestFastifyApplication>();
  let fileEnv: Env = {};
  const boot = (env: Env) =>
    startTestApp(redis!, options.clock ?? clock, { ...fileEnv, ...env }, { spanExporter: options.spanExporter });

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    fileEnv = typeof options.env === 'function' ? await options.env(redis) : (options.env ?? {});
    if (options.noApp) return;
    app = await boot({});
    for (const [name, env] of Object.entries(options.others ?? {})) others.set(name, await boot(env));
    if (options.listen) await app.listen(0, '127.0.0.1');
    for (const board of options.boards ?? []) await createBoard(app, board);
  });
  if (options.fresh)
    beforeEach(async () => {
      await redis!.clear();
      clock.setMs(startMs);
    });
  afterEach(async () => {
    for (const started of extra.splice(0).reverse()) await started.close();
  });
  afterAll(async () => {
    await app?.close();
    for (const other of others.values()) await other.close();
    await redis?.stop();
  });

  const started = () => {
    if (!app) throw new Error('no app of the file: started with noApp, or before beforeAll');
    return app;
  };
  return {
    app: started,
    http: () => request(started().getHttpServer()),
    redis: () => redis!,
    port: () => (started().getHttpServer().address() as AddressInfo).port,
    clock,
    startApp: async (env = {}) => {
      const another = await boot(env);
      extra.push(another);
      return another;
    },
    started: () => [...extra],
    describeApp: (env = {}) => {
      let scoped: NestFastifyApplication | undefined;
      beforeAll(async () => {
        scoped = await boot(env);
      });
      afterAll(async () => {
        await scoped?.close();
      });
      const get = () => scoped!;
      return { app: get, http: () => request(get().getHttpServer()) };
    },
    other: (name) => {
      const other = others.get(name);
      if (!other) throw new Error(`no app named ${name} in the options' others`);
      return other;
    },
  };
}

/** useApp on a private single-node Redis. */
export const useSingleNodeApp = (options: E2eOptions = {}) => useApp('single', options);

/** useApp on a private three-master Redis Cluster. */
export const useClusterApp = (options: E2eOptions = {}) => useApp('cluster', options);
