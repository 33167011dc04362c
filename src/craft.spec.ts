import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The size limits the house keeps (issue #23): a source file of at most 400 lines, a class of at most
 * 300 (a table of settings aside), a TypeScript function of at most 40 and a Lua function of at most 60. Measured here on every
 * source file, so a limit cannot be broken without this test naming where.
 */
const SRC = __dirname;
const MAX_FILE_LINES = 400;
const MAX_CLASS_LINES = 300;
const MAX_TS_FUNCTION_LINES = 40;
const MAX_LUA_FUNCTION_LINES = 60;

function sourceFiles(extension: string): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(extension) && !file.endsWith(`.spec${extension}`))
    .map((file) => join(SRC, file));
}

/** A node's lines from its name on (a method's decorators are documentation, not code), or from its start. */
function linesOf(source: ts.SourceFile, node: ts.Node): number {
  const named = 'name' in node && node.name ? (node.name as ts.Node) : node;
  const start = source.getLineAndCharacterOfPosition(named.getStart(source)).line;
  const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
  return end - start + 1;
}

/** A class with methods: one of only property declarations (a settings table) is data, not a class to split. */
function hasBehaviour(node: ts.ClassLikeDeclaration): boolean {
  return node.members.some((member) => ts.isFunctionLike(member));
}

/** Every class and function-like node of a file longer than its limit, as "path:line name (n lines)". */
function oversizedIn(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const limit = ts.isClassLike(node)
      ? hasBehaviour(node)
        ? MAX_CLASS_LINES
        : undefined
      : ts.isFunctionLike(node) && 'body' in node && node.body
        ? MAX_TS_FUNCTION_LINES
        : undefined;
    if (limit !== undefined && linesOf(source, node) > limit) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const name = 'name' in node && node.name ? (node.name as ts.Node).getText(source) : '(anonymous)';
      found.push(`${relative(SRC, path)}:${line} ${name} (${linesOf(source, node)} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Lua functions (`local function` ... the `end` at the same indentation) longer than the limit. */
function oversizedLua(path: string): string[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const opening = /^(\s*)local function (\w+)/.exec(line);
    if (!opening) return;
    const end = lines.findIndex((other, j) => j > i && other === `${opening[1]}end`);
    const length = (end === -1 ? lines.length : end) - i + 1;
    if (length > MAX_LUA_FUNCTION_LINES) found.push(`${relative(SRC, path)}:${i + 1} ${opening[2]} (${length} lines)`);
  });
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
    expect(sourceFiles('.ts').flatMap(oversizedIn)).toEqual([]);
  });

  it(`no Lua function over ${MAX_LUA_FUNCTION_LINES} lines`, () => {
    expect(sourceFiles('.lua').flatMap(oversizedLua)).toEqual([]);
  });
});
