import { join } from 'node:path';

/**
 * Node's arguments that run a TypeScript file of this repository in a child process from cached
 * JavaScript (cached-ts.mjs): emitted as ts-node's transpile-only mode emits it, but only the first
 * start after an edit pays for loading TypeScript and transpiling every file the service imports.
 */
export const runTs = (file: string): string[] => [join(__dirname, 'cached-ts.mjs'), file];
