/**
 * call_lib.lua's read_config keeps the config fields its HMGET answers by name, written out (every
 * call runs it; a loop over the names costs about three times the Lua instructions): the written-out
 * copy must keep each of CONFIG.fields from its own place in the answer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const source = readFileSync(join(__dirname, 'lua', 'call_lib.lua'), 'utf8');

/** CONFIG.fields, in their order. */
function configFields(): string[] {
  const list = /^ {2}fields = \{([^}]*)\}/m.exec(source)?.[1] ?? '';
  return [...list.matchAll(/'(\w+)'/g)].map((match) => match[1]);
}

/** What read_config's written-out copy keeps: field -> its 1-based place in the HMGET answer. */
function keptPlaces(): Map<string, number> {
  const start = source.indexOf('local function read_config(');
  const body = source.slice(start, source.indexOf('config.cfg_key = cfg_key', start));
  const kept = new Map<string, number>();
  for (const [, targets, values] of body.matchAll(
    /((?:config\.\w+,\s*)*config\.\w+)\s*=\s*((?:stored\[\d+\],\s*)*stored\[\d+\])/g,
  )) {
    const names = [...targets.matchAll(/config\.(\w+)/g)].map((match) => match[1]);
    const places = [...values.matchAll(/stored\[(\d+)\]/g)].map((match) => Number(match[1]));
    expect(places).toHaveLength(names.length);
    names.forEach((name, i) => kept.set(name, places[i]));
  }
  return kept;
}

describe('call_lib read_config', () => {
  it('keeps every one of CONFIG.fields from its place in the HMGET answer, and nothing else', () => {
    const fields = configFields();
    expect(fields.length).toBeGreaterThan(5);
    expect(keptPlaces()).toEqual(new Map(fields.map((field, i) => [field, i + 1])));
  });
});
