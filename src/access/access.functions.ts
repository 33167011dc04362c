import { join } from 'node:path';
import { NamedReply, oneOfReply } from '../redis/replies';
import { bareHeader, callArgs } from '../redis/function-args';
import { defineLibrary, handlerModules, typedFunction } from '../redis/function-library';

/** What the service stores of a key: the digest of its secret and what it grants. */
export interface StoredKey {
  digest: string;
  scopes: string[];
  prefixes: string[];
  createdAtSec: number;
}

const CREATE_ARGS = ['name', 'stored', 'max_keys'] as const;
const CREATE_REPLY = ['outcome'] as const;

export const ACCESS_FUNCTIONS = {
  create: typedFunction({
    name: 'tbApiKeyCreate',
    handler: 'key_create',
    numberOfKeys: 2,
    contract: { args: CREATE_ARGS, reply: CREATE_REPLY },
    build: (call: { hashKey: string; markerKey: string; name: string; stored: StoredKey; maxKeys: number }) => ({
      keys: [call.hashKey, call.markerKey],
      // Its header's time is 0: it reads no clock.
      args: callArgs(bareHeader(0), CREATE_ARGS, {
        name: call.name,
        stored: JSON.stringify(call.stored),
        max_keys: call.maxKeys,
      }),
    }),
    decode: (raw) =>
      oneOfReply('tbApiKeyCreate.outcome', new NamedReply('tbApiKeyCreate', CREATE_REPLY, raw).string('outcome'), [
        'created',
        'exists',
        'full',
      ] as const),
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
