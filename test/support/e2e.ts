import { AddressInfo } from 'node:net';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Clock } from '../../src/common/clock';
import { AppOptions } from '../../src/bootstrap';
import { ADMIN, createBoard, startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, Topology } from '../../harness/redis';
import { ListeningHttp, listenForTests, TestHttp } from '../../harness/test-http';

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
  /** Before each test: delete the file's keys (boards included: make them in the test) and reset the clock. */
  fresh?: boolean;
  /** No app of the file's own: tests start theirs with startApp, describe blocks with describeApp. */
  noApp?: boolean;
  /** More apps on the same Redis for the whole file, by name, each with settings over `env`: see other(). */
  others?: Record<string, Env>;
  spanExporter?: AppOptions['spanExporter'];
  /** redis-server arguments (e.g. maxmemory): the file's Redis is then always a server of its own. */
  redisServerArgs?: readonly string[];
  /** A Redis of the file's own, not the worker's: for tests that stop or freeze it (pause, freeze). */
  ownRedis?: boolean;
}

export interface E2eContext {
  /** The file's app (not with noApp). */
  app(): NestFastifyApplication;
  /** A supertest request against the file's app, over kept-alive connections to its port. */
  http(): TestHttp;
  redis(): TestRedis;
  /** The port of 127.0.0.1 the file's app listens on (raw sockets, fetch, SSE). */
  port(): number;
  clock: FakeClock;
  /** Another app on the same Redis with other settings (over the file's `env`), closed after the test. */
  startApp(env?: Env): Promise<NestFastifyApplication>;
  /** The apps this test started with startApp, in the order it started them. */
  started(): NestFastifyApplication[];
  /** One of the apps of `others`. */
  other(name: string): NestFastifyApplication;
  /** An app with other settings on the same Redis for the calling describe block (its own hooks). */
  describeApp(env?: Env): { app(): NestFastifyApplication; http(): TestHttp };
}

/** The file's Redis and apps: what useApp's hooks start and stop. */
class E2eApps {
  readonly clock: FakeClock;
  redis?: TestRedis;
  app?: NestFastifyApplication;
  listening?: ListeningHttp;
  /** Apps the running test started (closed after it). */
  readonly extra: NestFastifyApplication[] = [];
  readonly others = new Map<string, NestFastifyApplication>();
  private fileEnv: Env = {};

  constructor(
    private readonly topology: Topology,
    private readonly options: E2eOptions,
  ) {
    this.clock = new FakeClock(options.startMs ?? T0);
  }

  boot(env: Env): Promise<NestFastifyApplication> {
    const { clock, spanExporter } = this.options;
    return startTestApp(this.redis!, clock ?? this.clock, { ...this.fileEnv, ...env }, { spanExporter });
  }

  async start(): Promise<void> {
    const { redisServerArgs, ownRedis } = this.options;
    this.redis = await startTestRedis(this.topology, { serverArgs: redisServerArgs, own: ownRedis });
    const { env, noApp, others, boards } = this.options;
    this.fileEnv = typeof env === 'function' ? await env(this.redis) : (env ?? {});
    if (noApp) return;
    this.app = await this.boot({});
    for (const [name, otherEnv] of Object.entries(others ?? {})) this.others.set(name, await this.boot(otherEnv));
    this.listening = await listenForTests(this.app);
    for (const board of boards ?? []) await createBoard(this.app, board);
  }

  async stop(): Promise<void> {
    this.listening?.close();
    await this.app?.close();
    for (const other of this.others.values()) await other.close();
    await this.redis?.stop();
  }

  fileApp(): NestFastifyApplication {
    if (!this.app) throw new Error('no app of the file: started with noApp, or asked before beforeAll');
    return this.app;
  }

  fileHttp(): TestHttp {
    this.fileApp();
    return this.listening!.http();
  }
}

/** An app for the calling describe block, on the file's Redis. */
function describeApp(apps: E2eApps, env: Env): ReturnType<E2eContext['describeApp']> {
  let scoped: NestFastifyApplication | undefined;
  let listening: ListeningHttp | undefined;
  beforeAll(async () => {
    scoped = await apps.boot(env);
    listening = await listenForTests(scoped);
  });
  afterAll(async () => {
    listening?.close();
    await scoped?.close();
  });
  return { app: () => scoped!, http: () => listening!.http() };
}

/** The accessors a file gets. */
function contextOf(apps: E2eApps): E2eContext {
  return {
    app: () => apps.fileApp(),
    http: () => apps.fileHttp(),
    redis: () => apps.redis!,
    port: () => (apps.fileApp().getHttpServer().address() as AddressInfo).port,
    clock: apps.clock,
    startApp: async (env = {}) => {
      const another = await apps.boot(env);
      apps.extra.push(another);
      return another;
    },
    started: () => [...apps.extra],
    describeApp: (env = {}) => describeApp(apps, env),
    other: (name) => {
      const other = apps.others.get(name);
      if (!other) throw new Error(`no app named ${name} in the options' others`);
      return other;
    },
  };
}

/**
 * One Redis (single node or Cluster; the worker's unless the options ask for the file's own) and one app for a test file or describe block: registers
 * its beforeAll/afterAll (and afterEach for the apps a test started) and hands out accessors.
 */
export function useApp(topology: Topology, options: E2eOptions = {}): E2eContext {
  const apps = new E2eApps(topology, options);
  beforeAll(() => apps.start());
  if (options.fresh)
    beforeEach(async () => {
      await apps.redis!.clear();
      apps.clock.setMs(options.startMs ?? T0);
    });
  afterEach(async () => {
    for (const started of apps.extra.splice(0).reverse()) await started.close();
  });
  afterAll(() => apps.stop());
  return contextOf(apps);
}

/** useApp on a single-node Redis. */
export const useSingleNodeApp = (options: E2eOptions = {}) => useApp('single', options);

/** useApp on a three-master Redis Cluster. */
export const useClusterApp = (options: E2eOptions = {}) => useApp('cluster', options);

/** A board's PUT as the admin, with `windows` under the body's own fields; `query` is appended to the path. */
export function boardPut(http: E2eContext['http'], windows: object[]) {
  return (name: string, body: object, query = '') =>
    http()
      .put(`/admin/boards/${name}${query}`)
      .set(ADMIN)
      .send({ windows, ...body });
}

/** The rows a listing answers (GET `path`, expected 200) as [item, rank, score]. */
export function listedRows(http: E2eContext['http']) {
  return async (path: string) =>
    (await http().get(path).expect(200)).body.items.map((row: { item: string; rank: number; score: number }) => [
      row.item,
      row.rank,
      row.score,
    ]);
}
