import { windowsFromStored } from './stored-windows';

describe('windowsFromStored', () => {
  it('reads the text form, a window without a time taking the one before it', () => {
    expect(windowsFromStored('1h 3600 300 1796290397607,day 86400 3600,w:2 600 60 1796290400000')).toEqual([
      { name: '1h', periodSec: 3600, intervalSec: 300, createdAtMs: 1796290397607 },
      { name: 'day', periodSec: 86400, intervalSec: 3600, createdAtMs: 1796290397607 },
      { name: 'w:2', periodSec: 600, intervalSec: 60, createdAtMs: 1796290400000 },
    ]);
  });

  it('reads the JSON form of configs stored before the text', () => {
    const windows = [{ createdAtMs: 5, intervalSec: 60, periodSec: 180, name: 'm', snapshots: { keep: 3, top: 5 } }];
    expect(windowsFromStored(JSON.stringify(windows))).toEqual(windows);
  });

  it('refuses a value of neither form', () => {
    expect(() => windowsFromStored('1h 3600')).toThrow(/neither JSON nor plain windows/);
  });
});
