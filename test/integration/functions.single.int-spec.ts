import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { HealthIndicatorService } from '@nestjs/terminus';
import { validateConfig } from '../../src/common/config';
import { RedisHealthIndicator } from '../../src/health/redis.health';
import { defineLibrary } from '../../src/redis/function-library';
import { loadLibraries } from '../../src/redis/functions';
import { RESTAMP_AFTER_MS } from '../../src/redis/library-versions';
import { callFunction, fcallArgs, SEND_ALONE_MIN_ARGS } from '../../src/redis/redis-functions';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { FakeClock } from '../../harness/clock';
import { SECOND_VERSION_MODULE, testLibrary, twoWindowHeader } from '../../harness/functions';
import { startPrivateRedis } from '../../harness/private-redis';
import { commandCalls } from '../support/slowlog';
import { headerWindowsOf } from '../../src/ranking/core/board';
import { resolveWindows } from '../../src/ranking/core/window-math';

/** FUNCTION LOAD as INFO commandstats names it (a pattern: commandCalls builds a regular expression of it). */
const FUNCTION_LOAD = 'function\\|load';

// A private server: these tests FUNCTION FLUSH it, which must never reach a server other files use.
describe('Redis Functions on a single node', () => {
  let server: Awaited<ReturnType<typeof startPrivateRedis>>;
  let client: Redis;
  const { library, functions: fn } = testLibrary();
  const header = twoWindowHeader(1_700_000_123_456);

  beforeAll(async () => {
    server = await startPrivateRedis([]);
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await server.client.function('FLUSH');
    await loadLibraries(client, [library]);
  });

  it('loads the library once, with each function under its versioned name and its flags', async () => {
    await loadLibraries(client, [library]); // again: the node holds it, the same listing
    const listed = (await server.client.call('FUNCTION', 'LIST', 'LIBRARYNAME', library.name)) as unknown[][];
    expect(listed).toHaveLength(1);
    expect(listed[0][1]).toMatch(/^tb_fntest_[0-9a-f]{8}$/);
    expect(listed[0][1]).toBe(library.name);
    const functions = new Map((listed[0][5] as unknown[][]).map((f) => [f[1] as string, f[5] as string[]]));
    expect(functions.get(`${library.name}_header_echo`)).toEqual(['no-writes']);
    expect(functions.get(`${library.name}_add`)).toEqual([]);
    expect(functions.size).toBe(12); // its 11 and the load stamp (library-versions.ts)
  });

  it('answers an unknown function with "ERR Function not found" (what the reload keys on)', async () => {
    await expect(client.fcall('tb_nothing_here', 0)).rejects.toThrow(/^ERR Function not found$/);
    await expect(client.fcall_ro('tb_nothing_here', 0)).rejects.toThrow(/^ERR Function not found$/);
  });

  it('reads the common header once into a named table', async () => {
    expect(await callFunction(client, fn.headerEcho, header)).toEqual({
      version: 'v1',
      nowMs: 1_700_000_123_456,
      nowSec: 1_700_000_123,
      budget: 64,
      windows: [
        [3600, 60, 1_000, 0],
        [604_800, 86_400, 2_000, 0],
      ],
    });
    expect(await callFunction(client, fn.headerEcho, { ...header, windows: [] })).toMatchObject({ windows: [] });
    // Windows are cached per version and compared with the raw arguments: any change is seen.
    const changed = { ...header, windows: [header.windows[0], { ...header.windows[1], createdAtMs: 3_000 }] };
    expect((await callFunction(client, fn.headerEcho, changed)).windows[1]).toEqual([604_800, 86_400, 3_000, 0]);
    expect((await callFunction(client, fn.headerEcho, header)).windows[1]).toEqual([604_800, 86_400, 2_000, 0]);
    const other = { ...header, version: 'v2', windows: [header.windows[1]] };
    expect((await callFunction(client, fn.headerEcho, other)).windows).toEqual([[604_800, 86_400, 2_000, 0]]);
    expect((await callFunction(client, fn.headerEcho, header)).windows).toHaveLength(2);
  });

  it("reads a board call's own header (headerWindowsOf: four per window, a calendar window's slot origin)", async () => {
    const nowMs = Date.UTC(2026, 10, 25, 9, 30);
    const windows = resolveWindows([
      { name: 'h', period: '1h', interval: '1m' },
      { name: 'day', calendar: 'day', timeZone: 'UTC' },
    ]).map((spec) => ({ ...spec, createdAtMs: 7 }));
    const own = { version: 'v3', nowMs, budget: 64, windows: headerWindowsOf(windows, nowMs) };
    expect((await callFunction(client, fn.headerEcho, own)).windows).toEqual([
      [3600, 60, 7, 0],
      [86_400, 86_400, 7, Date.UTC(2026, 10, 25) / 1000],
    ]);
  });

  it('reads per-request records by field name, in the order the library declared', async () => {
    const requests = [
      { item: 'a', amount: 1, key: 'k1' },
      { item: 'b', amount: -2, key: undefined },
    ];
    expect(await callFunction(client, fn.recordsEcho, { header, requests })).toEqual([
      ['a', '1', 'k1'],
      ['b', '-2', ''],
    ]);
  });

  it('reads a named call by the names of its contract, and answers by name what TypeScript decodes by name', async () => {
    expect(await callFunction(client, fn.namedEcho, { header, item: 'a', amount: 21 })).toEqual({
      item: 'a',
      doubled: 42,
      windows: 2,
    });
  });

  it('names the function and the field when a named call gets other args or answers a field short', async () => {
    const args = fcallArgs(fn.namedEcho, fn.namedEcho.build({ header, item: 'a', amount: 1 }));
    await expect(client.fcall_ro(fn.namedEcho.redisName, ...args, 'extra')).rejects.toThrow(
      /TB_BAD_ARGS named_echo takes 3 args after the header \(item, amount, leave_out\), got 4/,
    );
    await expect(
      callFunction(client, fn.namedEcho, { header, item: 'a', amount: 1, leaveOut: 'doubled' }),
    ).rejects.toThrow(/TB_BAD_REPLY named_echo answered no doubled/);
  });

  it('writes a call of SEND_ALONE_MIN_ARGS arguments or more, or of a sendAlone function, at once; others into the auto-pipeline', async () => {
    const piped = new Redis(server.url, { enableAutoPipelining: true });
    const requests = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ item: `i${i}`, amount: i + 1, key: `k${i}` }));
    const argsOf = (count: number) =>
      fcallArgs(fn.recordsEcho, fn.recordsEcho.build({ header, requests: requests(count) })).length;
    let alone = 1;
    while (argsOf(alone) < SEND_ALONE_MIN_ARGS) alone++;
    try {
      await piped.ping();
      await server.client.config('RESETSTAT');
      const small = callFunction(piped, fn.recordsEcho, { header, requests: requests(alone - 1) });
      expect([piped.autoPipelineQueueSize, piped.commandQueue.length]).toEqual([1, 0]);
      // Not behind the small call's pipeline: on the connection already.
      const large = callFunction(piped, fn.recordsEcho, { header, requests: requests(alone) });
      expect([piped.autoPipelineQueueSize, piped.commandQueue.length]).toEqual([1, 1]);
      const rows = (count: number) => requests(count).map(({ item, amount, key }) => [item, String(amount), key]);
      expect(await small).toEqual(rows(alone - 1));
      expect(await large).toEqual(rows(alone));
      const flagged = callFunction(piped, { ...fn.recordsEcho, sendAlone: true }, { header, requests: requests(1) });
      expect([piped.autoPipelineQueueSize, piped.commandQueue.length]).toEqual([0, 1]);
      expect(await flagged).toEqual(rows(1));
      // Every one as FCALL_RO (records_echo is no-writes).
      expect(await server.client.info('commandstats')).toMatch(/cmdstat_fcall_ro:calls=3,/);
    } finally {
      piped.disconnect();
    }
  });

  it('refuses malformed arguments with TB_BAD_ARGS naming what is wrong', async () => {
    await expect(client.fcall_ro(fn.headerEcho.redisName, 0, 'v', 1, 2, 3, 60)).rejects.toThrow(
      /TB_BAD_ARGS header names 3 windows but has 5 args/,
    );
    await expect(client.fcall_ro(fn.headerEcho.redisName, 0, 'v', 'soon', 2, 0)).rejects.toThrow(
      /TB_BAD_ARGS now \(args\[2\]\) is not a number: soon/,
    );
    await expect(client.fcall_ro(fn.headerEcho.redisName, 0, 'v', 1, 2, 1, 3600, 'x', 0, 0)).rejects.toThrow(
      /TB_BAD_ARGS window interval \(args\[6\]\) is not a number: x/,
    );
    await expect(client.fcall_ro(fn.headerEcho.redisName, 0, 'v', 1, 2, 1, 3600, 60, 0, 'y')).rejects.toThrow(
      /TB_BAD_ARGS window slot origin \(args\[8\]\) is not a number: y/,
    );
    await expect(client.fcall_ro(fn.recordsEcho.redisName, 0, 'v', 1, 2, 0, 2, 'a', 1)).rejects.toThrow(
      /TB_BAD_ARGS 2 records of 3 fields need 6 args from 6/,
    );
  });

  it('sends no-writes functions as FCALL_RO, where Redis refuses a write', async () => {
    await expect(callFunction(client, fn.sneakyWrite, 'k')).rejects.toThrow(/Write commands are not allowed/);
    expect(await callFunction(client, fn.add, { key: 'k', amount: 5, header })).toBe(5);
    expect(await callFunction(client, fn.get, 'k')).toBe(5);
  });

  it("points a Redis error's line at the module line it came from", async () => {
    const error = await callFunction(client, fn.fail, undefined).then(
      () => new Error('no error'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/user_function:\d+ \(calls\.lua:\d+\)/);
    const line = Number(/calls\.lua:(\d+)/.exec(error.message)?.[1]);
    const source = readFileSync(`${__dirname}/../../harness/functions/calls.lua`, 'utf8').split('\n');
    expect(source[line - 1]).toContain('nothing.field');
  });

  it('sends no library the node holds: its top level is not run again, a top-level local lives on', async () => {
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(1);
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(2);
    const loads = await commandCalls(server.client, FUNCTION_LOAD);
    await loadLibraries(client, [library]);
    expect(await commandCalls(server.client, FUNCTION_LOAD)).toBe(loads);
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(3);
  });

  it('loads a changed library beside the held one, and reloads one stamped RESTAMP_AFTER_MS ago (REPLACE)', async () => {
    const v2 = testLibrary([SECOND_VERSION_MODULE]);
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(1);
    const loads = await commandCalls(server.client, FUNCTION_LOAD);
    await loadLibraries(client, [library, v2.library]);
    expect(await commandCalls(server.client, FUNCTION_LOAD)).toBe(loads + 1);
    expect(await callFunction(client, v2.functions.countCalls, undefined)).toBe(1);
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(2);
    // The stamp aged past RESTAMP_AFTER_MS: loaded again, which runs its top level again.
    await loadLibraries(client, [library], Date.now() + RESTAMP_AFTER_MS);
    expect(await commandCalls(server.client, FUNCTION_LOAD)).toBe(loads + 2);
    expect(await callFunction(client, fn.countCalls, undefined)).toBe(1);
  });

  it('keeps calls succeeding when the library is flushed under a stream of calls: reloaded, retried once', async () => {
    // Each batch of 20 calls is in flight on one connection when a FUNCTION FLUSH arrives on another:
    // the calls Redis runs after it find the function missing. A retry can itself fail only if
    // another flush lands between the reload and the retry (retried once, not more): so one flush per
    // batch, and a batch starts with a call of its own, which reloads the library if the last flush
    // came after every call of the previous batch (else the next batch's reload could precede its flush).
    let expected = 0;
    for (let batch = 0; batch < 20; batch++) {
      await callFunction(client, fn.get, 'sum');
      const calls: Array<Promise<number>> = [];
      for (let i = 1; i <= 20; i++) {
        expected += i;
        calls.push(callFunction(client, fn.add, { key: 'sum', amount: i, header }));
        if (i === 10) calls.push(server.client.function('FLUSH').then(() => 0));
      }
      await Promise.all(calls);
    }
    expect(await callFunction(client, fn.get, 'sum')).toBe(expected);
    const stats = await server.client.info('commandstats');
    expect(
      Number(
        /cmdstat_fcall:calls=\d+,usec=\d+,usec_per_call=[\d.]+,rejected_calls=\d+,failed_calls=(\d+)/.exec(stats)?.[1],
      ),
    ).toBeGreaterThan(0);
  });

  it('names why a reload failed when the retried call still finds no function', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-broken-'));
    const broken = join(dir, 'broken.lua');
    writeFileSync(broken, 'local function get(keys, args)\n  return redis.call(\n');
    const { functions } = defineLibrary({
      name: 'tb_broken',
      modules: [broken],
      functions: { get: fn.get },
    });
    await expect(callFunction(client, functions.get, 'k')).rejects.toThrow(
      /^ERR Function not found \(reload failed: FUNCTION LOAD of tb_broken_[0-9a-f]{8} on 127\.0\.0\.1:\d+: ERR Error compiling function: user_function:\d+: '\)' expected \(to close '\(' at line \d+ \(broken\.lua:2\)\)/,
    );
  });

  it('lets two loaders race, and two versions of a library live side by side', async () => {
    const other = new Redis(server.url);
    const v2 = testLibrary([SECOND_VERSION_MODULE]);
    try {
      const adds = Array.from({ length: 200 }, () => callFunction(client, fn.add, { key: 'race', amount: 1, header }));
      await Promise.all([
        ...Array.from({ length: 5 }, () => loadLibraries(client, [library, v2.library])),
        ...Array.from({ length: 5 }, () => loadLibraries(other, [library, v2.library])),
        ...adds,
      ]);
      expect(await callFunction(client, fn.get, 'race')).toBe(200);
      expect(await callFunction(other, v2.functions.get, 'race')).toBe(200);
      const names = ((await server.client.function('LIST')) as unknown[][]).map((lib) => lib[1]);
      expect(v2.library.name).not.toBe(library.name);
      expect(names.sort()).toEqual([library.name, v2.library.name].sort());
    } finally {
      other.disconnect();
    }
  });

  it('RedisFunctions loads its libraries at init, and reloads after a flush', async () => {
    const config = validateConfig({ ...server.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    const service = new RedisService(RedisSettings.from(config), new FakeClock(0));
    const functions = new RedisFunctions(service);
    try {
      await server.client.function('FLUSH');
      functions.define([library]);
      expect(functions.state).toEqual({ loaded: false, reason: expect.stringMatching(/not loaded/) });
      await functions.onModuleInit();
      expect(functions.state).toEqual({ loaded: true });
      expect(await server.client.function('LIST')).toHaveLength(1);
      await server.client.function('FLUSH');
      expect(await functions.call(fn.add, { key: 'svc', amount: 3, header })).toBe(3);
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it('answers not ready while its libraries cannot be loaded, and ready once a later try loads them', async () => {
    // Another library holding one of our function names: FUNCTION LOAD of ours fails until it goes.
    await server.client.function('FLUSH');
    const squatter = `#!lua name=squatter\nredis.register_function('${fn.add.redisName}', function() return 0 end)`;
    await server.client.function('LOAD', squatter);
    const config = validateConfig({ ...server.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    const service = new RedisService(RedisSettings.from(config), new FakeClock(0));
    const functions = new RedisFunctions(service);
    const health = new RedisHealthIndicator(service, functions, new HealthIndicatorService());
    try {
      functions.define([library]);
      await functions.onModuleInit();
      const down = { status: 'down', message: expect.stringContaining(`Function ${fn.add.redisName} already exists`) };
      expect(await health.isHealthy()).toEqual({ redis: down });
      await server.client.function('DELETE', 'squatter');
      expect(await functions.ensureLoaded(0)).toEqual({ loaded: true }); // readiness' retry, not throttled
      expect(await health.isHealthy()).toEqual({ redis: { status: 'up' } });
    } finally {
      await service.onApplicationShutdown();
    }
  });
});

// What a function's flags mean on a full Redis (maxmemory, noeviction), unlike a script without flags
// (EVAL's compatibility mode refuses only a command that may grow memory, and only before the first
// write): a function without flags is refused whole, even one that only reads or deletes.
describe('function flags on a full Redis', () => {
  let server: Awaited<ReturnType<typeof startPrivateRedis>>;
  const { library, functions: fn } = testLibrary();
  const header = twoWindowHeader(0);

  beforeAll(async () => {
    server = await startPrivateRedis(['--maxmemory-policy', 'noeviction']);
    await loadLibraries(server.client, [library]);
    await server.client.set('k', '5');
    await server.client.config('SET', 'maxmemory', '1'); // every byte in use is over the limit
  });
  afterAll(() => server.stop());

  it('answers a no-writes function, refuses one without flags whole (OOM)', async () => {
    expect(await callFunction(server.client, fn.get, 'k')).toBe(5);
    await expect(callFunction(server.client, fn.add, { key: 'k', amount: 1, header })).rejects.toThrow(
      /^OOM command not allowed when used memory > 'maxmemory'/,
    );
    // count_calls touches no key at all: refused all the same, for want of a flag.
    await expect(callFunction(server.client, fn.countCalls, undefined)).rejects.toThrow(/^OOM command not allowed/);
  });
});
