import { join } from 'node:path';
import { oneOfReply } from '../redis/replies';
import { ScriptCommand, typedScript } from '../redis/scripts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    tbApiKeyCreate: ScriptCommand<Context>;
  }
}

/** What the service stores of a key: the digest of its secret and what it grants. */
export interface StoredKey {
  digest: string;
  scopes: string[];
  prefixes: string[];
  createdAtSec: number;
}

export const ACCESS_SCRIPTS = {
  create: typedScript({
    name: 'tbApiKeyCreate',
    file: join(__dirname, 'scripts', 'key_create.lua'),
    numberOfKeys: 2,
    build: (call: { hashKey: string; markerKey: string; name: string; stored: StoredKey; maxKeys: number }) => ({
      keys: [call.hashKey, call.markerKey],
      args: [call.name, JSON.stringify(call.stored), call.maxKeys],
    }),
    decode: (raw) => oneOfReply('tbApiKeyCreate', raw, ['created', 'exists', 'full'] as const),
  }),
};
