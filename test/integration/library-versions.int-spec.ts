import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLibraries } from '../../src/redis/functions';
import { callFunction } from '../../src/redis/redis-functions';
import { KEPT_LOADED_WITHIN_MS } from '../../src/redis/library-versions';
import { testLibrary } from '../../harness/functions';
import { startPrivateRedis } from '../../harness/private-redis';

const HOUR_MS = 60 * 60 * 1000;
const T0 = 1_700_000_000_000;

/** Versions of the tests' library that differ by one comment line: each its own derived name. */
function versions(count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'tb-versions-'));
  return Array.from({ length: count }, (_, i) => {
    const module = join(dir, `version_${i + 1}.lua`);
    writeFileSync(module, `-- version ${i + 1} of tb_fntest: another source, another derived name\n`);
    return testLibrary([module]);
  });
}

// A private server: these tests FUNCTION FLUSH it, which must never reach a server other files use.
describe('old versions of a library on a node (FUNCTION LIST)', () => {
  let server: Awaited<ReturnType<typeof startPrivateRedis>>;
  const [v1, v2, v3, v4] = versions(4);

  const listed = async () =>
    ((await server.client.function('LIST')) as unknown[][]).map((library) => library[1] as string).sort();

  beforeAll(async () => {
    server = await startPrivateRedis([]);
  });
  afterAll(() => server.stop());
  beforeEach(async () => {
    await server.client.function('FLUSH');
  });

  it('keeps the two newest other versions however old, and any loaded within a day', async () => {
    await loadLibraries(server.client, [v1.library], T0);
    await loadLibraries(server.client, [v2.library], T0 + HOUR_MS);
    await loadLibraries(server.client, [v3.library], T0 + 2 * HOUR_MS);
    await loadLibraries(server.client, [v4.library], T0 + 3 * HOUR_MS);
    // v1 is past the two newest others, but loaded 3 h ago: an instance of it may still be starting.
    expect(await listed()).toEqual([v1, v2, v3, v4].map((v) => v.library.name).sort());

    await loadLibraries(server.client, [v4.library], T0 + KEPT_LOADED_WITHIN_MS + HOUR_MS + 1);
    expect(await listed()).toEqual([v2, v3, v4].map((v) => v.library.name).sort());
    // Days later still: v2 and v3 are the newest others, kept for instances that still run them.
    await loadLibraries(server.client, [v4.library], T0 + 30 * KEPT_LOADED_WITHIN_MS);
    expect(await listed()).toEqual([v2, v3, v4].map((v) => v.library.name).sort());
  });

  it('drops an unstamped version (loaded before stamps) first, and leaves other libraries alone', async () => {
    await server.client.function('LOAD', v1.library.source);
    await server.client.function(
      'LOAD',
      '#!lua name=tb_other_0badcafe\nredis.register_function("tb_other_x", function() return 1 end)',
    );
    await loadLibraries(server.client, [v2.library], T0);
    await loadLibraries(server.client, [v3.library], T0);
    expect(await listed()).toContain(v1.library.name); // one of the two newest others
    await loadLibraries(server.client, [v4.library], T0);
    expect(await listed()).toEqual(['tb_other_0badcafe', ...[v2, v3, v4].map((v) => v.library.name)].sort());
  });

  it('an instance whose version was dropped reloads it on its next call', async () => {
    // Loaded one after the other (not in the same millisecond, where the newest two would be a tie).
    await loadLibraries(server.client, [v1.library], T0);
    await loadLibraries(server.client, [v2.library], T0 + 1);
    await loadLibraries(server.client, [v3.library], T0 + 2);
    await loadLibraries(server.client, [v4.library], T0 + 2 * KEPT_LOADED_WITHIN_MS);
    expect(await listed()).not.toContain(v1.library.name);
    await server.client.set('k', '7');
    expect(await callFunction(server.client, v1.functions.get, 'k')).toBe(7);
    expect(await listed()).toContain(v1.library.name);
  });
});
