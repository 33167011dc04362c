'use strict';
/**
 * What the library's compiled files load in place of `@nestjs/swagger` (build.mjs points their
 * require here): the app's @nestjs/swagger when it has one, so its OpenAPI document describes the
 * mounted routes; else decorators that do nothing. The library only decorates with it (build.mjs
 * fails on any other use), so it is an optional peer: an app without it installs no @scarf/scarf.
 */
function load() {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS: loaded on demand, may be absent
    return require('@nestjs/swagger');
  } catch (error) {
    // Only @nestjs/swagger itself missing: a broken install of it must still say so.
    if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes("'@nestjs/swagger'")) throw error;
    const decorator = () => undefined;
    return new Proxy({}, { get: (_, name) => (name === '__esModule' ? true : () => decorator) });
  }
}

module.exports = load();
