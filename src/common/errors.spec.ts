import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from './errors';

describe('error codes', () => {
  it("the README's Errors and retries table lists every code with its status, applied? and retry?", () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const rows = new Map(
      [...readme.matchAll(/^\| `([A-Z_]+)` +\| (\d{3}) +\| (\S+) +\| (.+?) +\|$/gm)].map((m) => [
        m[1],
        [Number(m[2]), m[3], m[4]],
      ]),
    );
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect([code, ...(rows.get(code) ?? [])]).toEqual([code, info.status, info.applied, info.retry]);
    }
  });
});
