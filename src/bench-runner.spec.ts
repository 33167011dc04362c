import { PARTS } from '../bench/parts';
import { partsOf, selectionOf } from '../bench/run';

/** How `npm run bench` picks its parts (bench/run.ts): named ones, a capability's, or the default set. */
describe('the bench runner (issue #46)', () => {
  it('takes --part as a list, repeated or with =, and BENCH_PARTS when no part is named', () => {
    expect(selectionOf(['--part', 'http,redis', '--part=aliases'], { BENCH_PARTS: 'ties' }).parts).toEqual([
      'http',
      'redis',
      'aliases',
    ]);
    expect(selectionOf([], { BENCH_PARTS: 'ties,spans' }).parts).toEqual(['ties', 'spans']);
    expect(selectionOf(['--list'], {}).list).toBe(true);
    expect(() => selectionOf(['--parts', 'http'], {})).toThrow('unknown argument --parts');
  });

  it('runs the default set when nothing is named, less BENCH_SKIP', () => {
    const none = selectionOf([], {});
    expect(partsOf(none, new Set()).map((part) => part.name)).toEqual(
      PARTS.filter((part) => part.byDefault).map((part) => part.name),
    );
    expect(partsOf(none, new Set(['http'])).map((part) => part.name)).not.toContain('http');
  });

  it("runs named parts and a capability's parts in the registry's order, and refuses a name it does not know", () => {
    const picked = partsOf(selectionOf(['--part', 'aliases,hot-path', '--capability', 'abuse'], {}), new Set());
    expect(picked.map((part) => part.name)).toEqual([
      'hot-path',
      'aliases',
      ...PARTS.filter((part) => part.capability === 'abuse').map((part) => part.name),
    ]);
    expect(() => partsOf(selectionOf(['--part', 'hot-path,nope'], {}), new Set())).toThrow(
      'no such part or capability: nope',
    );
  });
});
