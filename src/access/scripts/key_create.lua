-- api_key_create: stores a new API key under its name unless the name is taken or the store is full,
-- in one step, so two admins creating keys at once can neither overwrite one another nor pass the cap.
-- KEYS: 2
-- KEYS[1]        hash of stored API keys: name -> JSON { digest, scopes, prefixes, createdAtSec }
-- KEYS[2]        the marker that this deployment has had keys (same hash tag; never deleted by the service)
-- ARGV[1]        the key's name
-- ARGV[2]        the stored JSON (the secret's SHA-256 digest, never the secret)
-- ARGV[3]        most keys the hash may hold
-- Reply: 'created', 'exists' (the name is taken) or 'full'
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'exists' end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], '1')
return 'created'
