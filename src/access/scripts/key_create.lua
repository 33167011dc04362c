-- api_key_create: stores a new API key under its name unless the name is taken or the store is full,
-- in one step, so two admins creating keys at once can neither overwrite one another nor pass the cap.
-- KEYS: 2
-- KEYS[1]        hash of stored API keys: name -> JSON { digest, scopes, prefixes, createdAtSec }
-- KEYS[2]        the marker that this deployment has had keys (same hash tag; never deleted by the service)
-- ARGV[1]        the key's name
-- ARGV[2]        the stored JSON (the secret's SHA-256 digest, never the secret)
-- ARGV[3]        most keys the hash may hold
-- Reply: 'created', 'exists' (the name is taken) or 'full'
local function key_create(keys, args)
  if redis.call('HEXISTS', keys[1], args[1]) == 1 then return 'exists' end
  if redis.call('HLEN', keys[1]) >= tonumber(args[3]) then return 'full' end
  redis.call('HSET', keys[1], args[1], args[2])
  redis.call('SET', keys[2], '1')
  return 'created'
end
