import { readFileSync } from 'node:fs';
import calculateSlot from 'cluster-key-slot';
import { COUNTER_SCRIPTS } from '../counters/counters.scripts';
import { RANKING_SCRIPTS } from '../ranking/ranking.scripts';
import { STATS_SCRIPTS } from '../stats/stats.scripts';
import { PreparedBoard } from '../ranking/board';
import { declaredKeyCount, ScriptDefinition } from './scripts';
import { KeyBuilder } from './keys';

/** Every script of every feature; feature modules add theirs here so the header checks cover them. */
export const ALL_SCRIPTS: ScriptDefinition[] = [
  ...Object.values(RANKING_SCRIPTS),
  ...Object.values(COUNTER_SCRIPTS),
  ...Object.values(STATS_SCRIPTS),
];

describe('Lua script headers', () => {
  it.each(ALL_SCRIPTS.map((s) => [s.name, s] as const))(
    '%s declares the KEYS count it is registered with',
    (_, script) => {
      const source = readFileSync(script.file, 'utf8');
      expect(declaredKeyCount(source)).toBe(script.numberOfKeys);
      const documentedKeys = new Set([...source.matchAll(/^-- KEYS\[(\d+)\]/gm)].map((m) => Number(m[1])));
      if (script.numberOfKeys === 'dynamic') {
        expect(documentedKeys.size).toBeGreaterThan(0);
      } else {
        expect([...documentedKeys].sort((a, b) => a - b)).toEqual(
          Array.from({ length: script.numberOfKeys }, (_, i) => i + 1),
        );
      }
      expect(source).toMatch(/^-- Reply:/m);
      expect(source).toMatch(/^-- ARGV\[1\]|^-- \(no ARGV\)/m);
    },
  );

  it.each(ALL_SCRIPTS.flatMap((s) => [s.file, ...(s.libraries ?? [])]).map((f) => [f]))(
    '%s never reads the server clock',
    (file) => {
      expect(readFileSync(file, 'utf8')).not.toMatch(/['"]TIME['"]/);
    },
  );
});

describe('ranking keys share one Cluster slot per call', () => {
  const names = ['posts', 'a', 'x.y:z-1_2', 'Z'.repeat(64)];
  it.each(names)('board %s', (name) => {
    const keys = new KeyBuilder('tb:').board(name);
    const board = new PreparedBoard(
      {
        name,
        version: 'v',
        shards: 1,
        windows: [
          { name: '1h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 },
          { name: '7d', periodSec: 604800, intervalSec: 86400, createdAtMs: 0 },
        ],
      },
      (shard) => new KeyBuilder('tb:').board(name, shard),
    );
    const all = [
      ...board.allKeys,
      ...board.incrementKeys,
      keys.slot('1h', 1_700_000_000),
      keys.slot('7d', 0),
      keys.cfg(),
      keys.likes(),
    ];
    expect(new Set(all.map((key) => calculateSlot(key))).size).toBe(1);
  });

  it.each(names)('sharded board %s: each shard on one slot of its own tag', (name) => {
    const builder = new KeyBuilder('tb:');
    const board = new PreparedBoard(
      { name, version: 'v', shards: 8, windows: [{ name: '1h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 }] },
      (shard) => builder.board(name, shard),
    );
    expect(board.shards).toHaveLength(8);
    for (const shard of board.shards) {
      const all = [...shard.allKeys, ...shard.incrementKeys, shard.keys.slot('1h', 60)];
      expect(new Set(all.map((key) => calculateSlot(key))).size).toBe(1);
    }
    expect(new Set(board.shards.map((shard) => shard.keys.tag)).size).toBe(8);
    expect(board.shards[0].keys.tag).toBe(builder.board(name).tag);
  });

  it('puts different boards under different tags', () => {
    const builder = new KeyBuilder('tb:');
    expect(builder.board('a').cfg()).toBe('{tb:board:a}:cfg');
    expect(builder.board('a').slot('24h', 3600)).toBe('{tb:board:a}:24h:slot:3600');
    expect(builder.board('b').tag).not.toBe(builder.board('a').tag);
    expect(builder.board('a', 3).cfg()).toBe('{tb:board:a/3}:cfg');
  });
});
