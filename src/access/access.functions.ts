import { defineLibrary, functionSet, handlerModules } from '../redis/function-library';
import { join } from 'node:path';
import { namedFunction } from '../redis/named-function';
import { oneOfReply } from '../redis/replies';
import { bareHeader } from '../redis/function-args';

/** What the service stores of a key: the digest of its secret and what it grants. */
export interface StoredKey {
  digest: string;
  scopes: string[];
  prefixes: string[];
  createdAtSec: number;
}

export const ACCESS_FUNCTIONS = functionSet('tbApiKey', {
  create: namedFunction({
    handler: 'key_create',
    numberOfKeys: 2,
    args: ['name', 'stored', 'max_keys'],
    reply: ['outcome'],
    build: (call: { hashKey: string; markerKey: string; name: string; stored: StoredKey; maxKeys: number }) => ({
      keys: [call.hashKey, call.markerKey],
      // Its header's time is 0: it reads no clock.
      header: bareHeader(0),
      args: {
        name: call.name,
        stored: JSON.stringify(call.stored),
        max_keys: call.maxKeys,
      },
    }),
    decode: (reply) =>
      oneOfReply('tbApiKeyCreate.outcome', reply.string('outcome'), ['created', 'exists', 'full'] as const),
  }),
});

/**
 * tb_access: the API key store's function, loaded once per node and called by FCALL like tb_ranking.
 * Its version is derived from its assembled Lua.
 */
export const ACCESS = defineLibrary({
  name: 'tb_access',
  modules: handlerModules(join(__dirname, 'scripts'), ACCESS_FUNCTIONS),
  functions: ACCESS_FUNCTIONS,
});
