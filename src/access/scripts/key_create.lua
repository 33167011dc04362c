-- requires: reader
-- api_key_create: stores a new API key under its name unless the name is taken or the store is full,
-- in one step, so two admins creating keys at once can neither overwrite one another nor pass the cap.
-- Keys: keys (hash of stored API keys: name -> JSON { digest, scopes, prefixes, createdAtSec }), marker
--   (that this deployment has had keys; same hash tag, never deleted by the service)
-- Args (reader.read_call, CALLS.key_create): the header (no version, time 0: it reads none, no
--   windows), then
--   name      the key's name
--   stored    the stored JSON (the secret's SHA-256 digest, never the secret)
--   max_keys  most keys the hash may hold
-- Reply (reader.answer, CALLS.key_create): outcome, 'created', 'exists' (the name is taken) or 'full'
local function key_create(keys, args)
  local keys_key, marker_key = keys[1], keys[2]
  local _, arg = reader.read_call(args, CALLS.key_create)
  local outcome = 'created'
  if redis.call('HEXISTS', keys_key, arg.name) == 1 then
    outcome = 'exists'
  elseif redis.call('HLEN', keys_key) >= tonumber(arg.max_keys) then
    outcome = 'full'
  else
    redis.call('HSET', keys_key, arg.name, arg.stored)
    redis.call('SET', marker_key, '1')
  end
  return reader.answer(CALLS.key_create, { outcome = outcome })
end
