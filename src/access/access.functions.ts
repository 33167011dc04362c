import { join } from 'node:path';
import { oneOfReply } from '../redis/replies';
import { defineLibrary, handlerModules, typedFunction } from '../redis/function-library';

/** What the service stores of a key: the digest of its secret and what it grants. */
export interface StoredKey {
  digest: string;
  scopes: string[];
  prefixes: string[];
  createdAtSec: number;
}

export const ACCESS_FUNCTIONS = {
  create: typedFunction({
    name: 'tbApiKeyCreate',
    handler: 'key_create',
    numberOfKeys: 2,
    build: (call: { hashKey: string; markerKey: string; name: string; stored: StoredKey; maxKeys: number }) => ({
      keys: [call.hashKey, call.markerKey],
      args: [call.name, JSON.stringify(call.stored), call.maxKeys],
    }),
    decode: (raw) => oneOfReply('tbApiKeyCreate', raw, ['created', 'exists', 'full'] as const),
  }),
};

/**
 * tb_access: the API key store's function, loaded once per node and called by FCALL like tb_ranking.
 * Its version is derived from its assembled Lua.
 */
export const ACCESS = defineLibrary({
  name: 'tb_access',
  modules: handlerModules(join(__dirname, 'scripts'), ACCESS_FUNCTIONS),
  functions: ACCESS_FUNCTIONS,
});
