/**
 * call_lib.lua's read_config keeps the config fields its HMGET answers by name, written out (every
 * call runs it; a loop over the names costs about three times the Lua instructions): the written-out
 * copy must keep each of the core's CONFIG.fields from its own place in the answer, and each place of
 * the options' every-board fields (EVERY_BOARD) from the places after them, in order.
 */
import { readdirSync, readFileSync } from 'node:fs';
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

/** EVERY_BOARD's places, and the answer's places read_config keeps in them (1-based). */
function everyBoardPlaces(): { places: number; kept: number[] } {
  const places = (/^local EVERY_BOARD = \{([^}]*)\}/m.exec(source)?.[1] ?? '').split(',').length;
  const start = source.indexOf('config.cfg_key = cfg_key');
  const body = source.slice(source.indexOf('local function read_config('), start);
  const line =
    /((?:config\[every\[\d+\]\],\s*)*config\[every\[\d+\]\])\s*=\s*((?:stored\[\d+\],\s*)*stored\[\d+\])/.exec(body);
  const targets = [...(line?.[1] ?? '').matchAll(/every\[(\d+)\]/g)].map((match) => Number(match[1]));
  const values = [...(line?.[2] ?? '').matchAll(/stored\[(\d+)\]/g)].map((match) => Number(match[1]));
  expect(targets).toEqual(targets.map((_, i) => i + 1));
  return { places, kept: values };
}

describe('call_lib read_config', () => {
  it('keeps every one of CONFIG.fields from its place in the HMGET answer, and nothing else', () => {
    const fields = configFields();
    expect(fields.length).toBeGreaterThan(5);
    expect(keptPlaces()).toEqual(new Map(fields.map((field, i) => [field, i + 1])));
  });

  it("keeps every place of the options' every-board fields, from the answer's places after the core's", () => {
    const core = configFields().length;
    const { places, kept } = everyBoardPlaces();
    expect(kept).toEqual(Array.from({ length: places }, (_, i) => core + i + 1));
  });

  it("has a place for each of the options' every-board fields, and none unused", () => {
    const options = join(__dirname, '..', 'options');
    const added = readdirSync(options, { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.lua'))
      .flatMap((path) => [
        ...readFileSync(join(options, path), 'utf8').matchAll(/config_field_add\('\w+', '[\w-]+', true\)/g),
      ]);
    expect(added.length).toBeGreaterThan(0);
    expect(added).toHaveLength(everyBoardPlaces().places);
  });
});
