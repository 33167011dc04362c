import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MAX_CLASS_LINES, MAX_TS_FUNCTION_LINES, oversizedIn } from '../harness/code-size';

/**
 * The size limits the house keeps (issue #23): a source file of at most 400 lines, a class of at most
 * 300 (a table of settings aside), a TypeScript function of at most 40 and a Lua function of at most 60. Measured here on every
 * source file, so a limit cannot be broken without this test naming where.
 */
const SRC = __dirname;
const MAX_FILE_LINES = 400;
const MAX_LUA_FUNCTION_LINES = 60;

function sourceFiles(extension: string): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(extension) && !file.endsWith(`.spec${extension}`))
    .map((file) => join(SRC, file));
}

/** A Lua line without its comment and the contents of its strings (what the block scan reads). */
function luaCode(line: string): string {
  return line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''").replace(/--.*$/, '');
}

/**
 * Every Lua function longer than the limit, whatever its form: `local function f`, `function m.f`,
 * `f = function(...)` and closures nested in another function (whose lines also count for it). Blocks
 * are followed by their keywords: function, if, for / while (their `do` opens nothing more), a bare
 * `do` and repeat ... until; `end` closes the innermost.
 */
function oversizedLua(path: string): string[] {
  const found: string[] = [];
  const open: Array<{ line: number; name?: string }> = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const code = luaCode(text);
      for (const match of code.matchAll(/\b(function|if|for|while|do|repeat|until|end)\b/g)) {
        const word = match[1];
        if (word === 'function') {
          const named = /(?:function\s+([\w.:]+)|([\w.]+)\s*=\s*function)/.exec(code);
          open.push({ line: i, name: named?.[1] ?? named?.[2] ?? 'function' });
        } else if (word === 'do' && /\b(for|while)\b/.test(code.slice(0, match.index))) {
          continue;
        } else if (word === 'end' || word === 'until') {
          const closed = open.pop();
          const length = i - (closed?.line ?? i) + 1;
          if (closed?.name !== undefined && length > MAX_LUA_FUNCTION_LINES) {
            found.push(`${relative(SRC, path)}:${(closed.line ?? 0) + 1} ${closed.name} (${length} lines)`);
          }
        } else {
          open.push({ line: i });
        }
      }
    });
  if (open.length > 0)
    found.push(`${relative(SRC, path)}: ${open.length} block(s) never closed (the scan lost its way)`);
  return found;
}

describe('size limits of the source (issue #23)', () => {
  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const long = [...sourceFiles('.ts'), ...sourceFiles('.lua')]
      .map((path) => [relative(SRC, path), readFileSync(path, 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`no class over ${MAX_CLASS_LINES} lines, no TypeScript function over ${MAX_TS_FUNCTION_LINES}`, () => {
    expect(sourceFiles('.ts').flatMap((path) => oversizedIn(path, SRC))).toEqual([]);
  });

  it(`no Lua function over ${MAX_LUA_FUNCTION_LINES} lines`, () => {
    expect(sourceFiles('.lua').flatMap(oversizedLua)).toEqual([]);
  });

  it('docs/architecture.md states these limits', () => {
    const doc = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8');
    const section = doc.slice(
      doc.indexOf('\n## Size limits\n'),
      doc.indexOf('\n## ', doc.indexOf('\n## Size limits\n') + 1),
    );
    for (const stated of [
      `over ${MAX_FILE_LINES} lines`,
      `no class over ${MAX_CLASS_LINES}`,
      `no TypeScript function over ${MAX_TS_FUNCTION_LINES}`,
      `no Lua function over ${MAX_LUA_FUNCTION_LINES}`,
    ])
      expect(section.replace(/\s+/g, ' ')).toContain(stated);
  });
});
