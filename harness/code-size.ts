import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';

/** The size limits of a class (a table of settings aside) and of a TypeScript or JavaScript function. */
export const MAX_CLASS_LINES = 300;
export const MAX_TS_FUNCTION_LINES = 40;

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

/** The limit a node keeps, if it has one: a class with behaviour, or a function-like node with a body. */
function limitOf(node: ts.Node): number | undefined {
  if (ts.isClassLike(node)) return hasBehaviour(node) ? MAX_CLASS_LINES : undefined;
  return ts.isFunctionLike(node) && 'body' in node && node.body ? MAX_TS_FUNCTION_LINES : undefined;
}

/**
 * Every class and function-like node of a file longer than its limit, as "path:line name (n lines)", the
 * path relative to `root`. A nested function counts for itself and for the function around it.
 */
export function oversizedIn(path: string, root: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const limit = limitOf(node);
    if (limit !== undefined && linesOf(source, node) > limit) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const name = 'name' in node && node.name ? (node.name as ts.Node).getText(source) : '(anonymous)';
      found.push(`${relative(root, path)}:${line} ${name} (${linesOf(source, node)} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
