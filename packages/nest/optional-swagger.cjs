'use strict';
/**
 * What the library's compiled files load in place of `@nestjs/swagger` (build.mjs points their
 * require here): the app's @nestjs/swagger when it has one, so its OpenAPI document describes the
 * mounted routes; else decorators that do nothing, and @nestjs/mapped-types' mapped types (the board
 * DTOs join the options' fields with IntersectionType: validation and transformation metadata carried
 * over, the OpenAPI part only with @nestjs/swagger). The library uses nothing else of it (build.mjs
 * fails on any other use), so it is an optional peer: an app without it installs no @scarf/scarf.
 */
const MAPPED_TYPES = new Set(['IntersectionType', 'PartialType', 'PickType', 'OmitType']);

function load() {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS: loaded on demand, may be absent
    return require('@nestjs/swagger');
  } catch (error) {
    // Only @nestjs/swagger itself missing: a broken install of it must still say so.
    if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes("'@nestjs/swagger'")) throw error;
    const decorator = () => undefined;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, as above
    const mapped = (name) => require('@nestjs/mapped-types')[name];
    return new Proxy(
      {},
      { get: (_, name) => (name === '__esModule' ? true : MAPPED_TYPES.has(name) ? mapped(name) : () => decorator) },
    );
  }
}

module.exports = load();
