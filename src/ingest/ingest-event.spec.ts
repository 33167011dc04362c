import { parseEvent } from './ingest-event';

const NOW = 1_700_000_000_000;

describe('parseEvent', () => {
  it('reads an event, with the defaults of board and amount', () => {
    expect(parseEvent('{"item":"a"}', 'b', NOW)).toEqual({ board: 'b', item: 'a', amount: 1 });
    expect(parseEvent('{"board":"c","item":"a","amount":-3,"at":1699999999.5}', 'b', NOW)).toEqual({
      board: 'c',
      item: 'a',
      amount: -3,
      atMs: 1_699_999_999_500,
    });
    expect(parseEvent('{"item":"a","id":"e-1"}', 'b', NOW)).toEqual({ board: 'b', item: 'a', amount: 1 });
  });

  it('reads its segments', () => {
    expect(parseEvent('{"item":"a","segments":["en","us"]}', 'b', NOW)).toEqual({
      board: 'b',
      item: 'a',
      amount: 1,
      segments: ['en', 'us'],
    });
  });

  it('reads its actor', () => {
    expect(parseEvent('{"item":"a","actor":"user-7"}', 'b', NOW)).toEqual({
      board: 'b',
      item: 'a',
      amount: 1,
      actor: 'user-7',
    });
  });

  it('counts an event from the future as now', () => {
    expect(parseEvent('{"item":"a","at":1800000000}', 'b', NOW)).toMatchObject({ atMs: NOW });
  });

  it.each([
    ['not json', 'NOT_JSON'],
    ['[1]', 'INVALID: not a JSON object'],
    ['{"item":"a"}', 'INVALID: board is missing'],
    ['{"board":"a{b","item":"a"}', 'INVALID: board must be'],
    ['{"board":"b","item":""}', 'INVALID: item must be'],
    ['{"board":"b","item":"a","amount":0}', 'INVALID: amount'],
    ['{"board":"b","item":"a","amount":1.5}', 'INVALID: amount'],
    ['{"board":"b","item":"a","amount":1000001}', 'INVALID: amount'],
    ['{"board":"b","item":"a","at":"now"}', 'INVALID: at'],
    ['{"board":"b","item":"a","score":5}', 'INVALID: score is not supported'],
    ['{"board":"b","item":"a","actor":""}', 'INVALID: actor must be'],
    ['{"board":"b","item":"a","actor":7}', 'INVALID: actor must be'],
    ['{"board":"b","item":"a","colour":"red"}', 'INVALID: unknown field colour'],
    ['{"board":"b","item":"a","segments":[]}', 'INVALID: segments must be 1-8 names'],
    ['{"board":"b","item":"a","segments":"en"}', 'INVALID: segments must be'],
    ['{"board":"b","item":"a","segments":["a{b"]}', 'INVALID: segments must be'],
    ['{"board":"b","item":"a","segments":["1","2","3","4","5","6","7","8","9"]}', 'INVALID: segments must be'],
    ['{"board":"b","item":"a","segments":["en","en"]}', 'INVALID: segments names a segment twice'],
  ])('refuses %s', (payload, reason) => {
    expect(parseEvent(payload, undefined, NOW)).toEqual(expect.stringContaining(reason));
  });
});
