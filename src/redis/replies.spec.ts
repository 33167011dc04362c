import { flagReply, intReply, NamedReply, oneOfReply, Reply, ScriptReplyError } from './replies';

describe('checked script replies', () => {
  it('reads integers, flags, strings and numbers at their positions', () => {
    const reply = new Reply('tbX', [1, 0, 'a', '1.5', 7]);
    expect([reply.flag(0), reply.flag(1), reply.string(2), reply.number(3), reply.int(4)]).toEqual([
      true,
      false,
      'a',
      1.5,
      7,
    ]);
    expect(reply.intsFrom(4)).toEqual([7]);
  });

  it('reads a named reply by the field names of its contract', () => {
    const reply = new NamedReply('tbX', ['draining', 'rows', 'tie'] as const, [1, ['a', '2'], 'm']);
    expect([reply.flag('draining'), reply.nested('rows').string(0), reply.string('tie')]).toEqual([true, 'a', 'm']);
  });

  it('reads records, rows and a head by name, and whole lists', () => {
    const records = new Reply('tbX', ['a', '1.5', 2, 'b', 3, 4]).records(['item', 'score', 'rank'] as const);
    expect(records.map((row) => [row.string('item'), row.number('score'), row.int('rank')])).toEqual([
      ['a', 1.5, 2],
      ['b', 3, 4],
    ]);
    expect(new Reply('tbX', [1, 2, 3, 4]).rows(2).map((row) => row.numbers())).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const { head, rest } = new Reply('tbX', ['s', 5, 6]).headed(['name'] as const, 'counts');
    expect([head.string('name'), rest.intsFrom(0), rest.script]).toEqual(['s', [5, 6], 'tbX.counts']);
    expect(new Reply('tbX', ['a', 'b']).strings()).toEqual(['a', 'b']);
    const lead = new Reply('tbX', [2, 'c', 9]).head(['outcome', 'context'] as const);
    expect([lead.int('outcome'), lead.string('context'), lead.script]).toEqual([2, 'c', 'tbX']);
  });

  it.each([
    [
      'records cut short',
      () => new Reply('tbX', ['a', 1, 'b']).records(['item', 'score']),
      /tbX .*expected rows of 2 entries, got 3 entries/,
    ],
    [
      'a record field of the wrong kind, named with its record',
      () => new Reply('tbX', ['a', 1, 'b', 'c']).records(['item', 'score'] as const)[1].int('score'),
      /tbX\[1\]\.score .*expected an integer, got "c"/,
    ],
    ['a head longer than the reply', () => new Reply('tbX', [1]).headed(['a', 'b'], 'rest'), /at least 2 entries/],
    ['a lead longer than the reply', () => new Reply('tbX', [1]).head(['a', 'b']), /at least 2 entries/],
    [
      'a named reply a field short',
      () => new NamedReply('tbX', ['a', 'b'], [1]),
      /tbX .*expected the fields a, b, got 1 entries \(missing b\)/,
    ],
    [
      'a named reply a field long',
      () => new NamedReply('tbX', ['a'], [1, 2]),
      /tbX .*expected the fields a, got 2 entries/,
    ],
    [
      'a field the contract does not name',
      () => new NamedReply<string>('tbX', ['a'], [1]).int('b'),
      /tbX .*no field "b" \(its fields: a\)/,
    ],
    [
      'a string for an integer field',
      () => new NamedReply('tbX', ['a'], ['4']).int('a'),
      /tbX\.a .*expected an integer, got "4"/,
    ],
    [
      'a flat value for a nested field',
      () => new NamedReply('tbX', ['rows'], [1]).nested('rows'),
      /tbX\.rows .*expected an array/,
    ],
    ['not an array', () => new Reply('tbX', 'OK'), /tbX .*expected an array, got "OK"/],
    ['a wrong length', () => new Reply('tbX', [1, 2]).expectLength(3), /expected 3 entries, got 2/],
    ['too short', () => new Reply('tbX', [1]).expectLength(2, true), /expected at least 2 entries/],
    ['odd pairs', () => new Reply('tbX', [1, 'a', 2, 'b']).expectPairsFrom(1), /expected pairs from entry 1/],
    ['a string for an integer', () => new Reply('tbX', ['4']).int(0), /entry 0: expected an integer, got "4"/],
    ['a float for an integer', () => new Reply('tbX', [1.5]).int(0), /expected an integer, got 1.5/],
    ['2 for a flag', () => new Reply('tbX', [2]).flag(0), /expected 0 or 1/],
    ['a number for a string', () => new Reply('tbX', [3]).string(0), /expected a string, got 3/],
    ['a word for a number', () => new Reply('tbX', ['abc']).number(0), /expected a number/],
    ['an empty string for a number', () => new Reply('tbX', ['']).number(0), /expected a number/],
    ['a missing entry', () => new Reply('tbX', []).int(0), /entry 0: expected an integer, got undefined/],
    ['a flat value for a nested array', () => new Reply('tbX', [1]).nested(0), /expected an array/],
    ['an array for an integer reply', () => intReply('tbX', [1]), /expected an integer, got an array of 1/],
    ['3 for a flag reply', () => flagReply('tbX', 3), /expected 0 or 1, got 3/],
    ['an unknown word', () => oneOfReply('tbX', 'maybe', ['yes', 'no']), /expected one of yes, no, got "maybe"/],
  ])('refuses %s with an error naming the script', (_, read, message) => {
    expect(read).toThrow(ScriptReplyError);
    expect(read).toThrow(message);
  });
});
