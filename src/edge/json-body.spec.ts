import { jsonShapeProblem } from './json-body';

describe('jsonShapeProblem', () => {
  const limits = { maxDepth: 3, maxKeysPerObject: 2, maxElementsPerArray: 4, maxValuesPerBody: 12 };

  it('accepts the bodies the routes take', () => {
    expect(jsonShapeProblem('{"items":[{"item":"a","amount":2},{"item":"b"}]}', limits)).toBeUndefined();
    expect(jsonShapeProblem('{"amount":1}', limits)).toBeUndefined();
    expect(jsonShapeProblem('[]', limits)).toBeUndefined();
    expect(jsonShapeProblem('', limits)).toBeUndefined();
  });

  it('refuses nesting deeper than the limit, arrays and objects alike', () => {
    expect(jsonShapeProblem('[[[[1]]]]', limits)).toBe('body is nested deeper than 3 levels');
    expect(jsonShapeProblem('{"a":{"b":{"c":{}}}}', limits)).toBe('body is nested deeper than 3 levels');
    expect(jsonShapeProblem('['.repeat(2000) + ']'.repeat(2000), limits)).toMatch(/nested deeper/);
  });

  it('refuses an object with more keys than the limit, counting each object on its own', () => {
    expect(jsonShapeProblem('{"a":1,"b":2,"c":3}', limits)).toBe('body has an object with more than 2 keys');
    expect(jsonShapeProblem('[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2}]', limits)).toBeUndefined();
    expect(jsonShapeProblem('{"a":{"x":1,"y":2},"b":2}', limits)).toBeUndefined();
  });

  it('reads brackets, colons, quotes and backslashes inside strings as text', () => {
    expect(jsonShapeProblem('{"a":"[[[[{{{{:::"}', limits)).toBeUndefined();
    expect(jsonShapeProblem('{"a":"x\\\\","b":"\\"[[[[["}', limits)).toBeUndefined();
    expect(jsonShapeProblem('{"k\\":1,\\"z":1}', limits)).toBeUndefined(); // one key whose name holds an escaped quote
  });

  it('takes linear time on a body built to be slow (90 000 keys, refused at the 3rd)', () => {
    const wide = `{${Array.from({ length: 90_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
    expect(jsonShapeProblem(wide, limits)).toBe('body has an object with more than 2 keys');
  });

  it('refuses an array with more elements than the limit, and more values in all than the limit', () => {
    expect(jsonShapeProblem('[1,2,3,4]', limits)).toBeUndefined();
    expect(jsonShapeProblem('[ ]', limits)).toBeUndefined();
    expect(jsonShapeProblem('[1,2,3,4,5]', limits)).toBe('body has an array with more than 4 elements');
    expect(jsonShapeProblem('{"items":[{},{},{},{},{}]}', limits)).toBe('body has an array with more than 4 elements');
    expect(jsonShapeProblem('[ "a" , "b,c,d,e,f" ]', limits)).toBeUndefined(); // commas in strings are text
    // 3 arrays of 4 objects of 1 key: 1 + 3 + 12 + 12 values, over 12 though no array is too long.
    const wide = `{"a":[${'{"k":1},'.repeat(3)}{"k":1}],"b":[1,2,3,4],"c":[1,2,3,4]}`;
    expect(jsonShapeProblem(wide, limits)).toBe('body holds more than 12 values');
  });

  it('takes linear time on a 1 MB array of empty objects (refused at the limit)', () => {
    const body = `{"items":[${'{},'.repeat(350_000)}{}]}`;
    expect(jsonShapeProblem(body)).toBe('body has an array with more than 1000 elements');
  });
});
