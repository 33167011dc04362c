import { byWindow } from './write-rules';

describe('byWindow', () => {
  const standing = (score: number) => ({ score, rank: 1, previousRank: null });

  it('names each standing by its window, in the order of the names, as JSON writes it', () => {
    const windows = byWindow({ windowNames: ['24h', '1h'], standings: [standing(2), standing(1)] });
    expect(JSON.stringify(windows)).toBe(
      '{"24h":{"score":2,"rank":1,"previousRank":null},"1h":{"score":1,"rank":1,"previousRank":null}}',
    );
  });

  it('keeps a window named __proto__ as a key of its own', () => {
    const windows = byWindow({ windowNames: ['h', '__proto__'], standings: [standing(1), standing(2)] });
    expect(Object.keys(windows)).toEqual(['h', '__proto__']);
    expect(Object.getPrototypeOf(windows)).toBe(Object.prototype);
    expect(JSON.stringify(windows)).toContain('"__proto__":{"score":2');
  });
});
