-- requires: reader
-- index_prune: one bounded step of the stats index pruner: removes up to a page of pairs whose latest
-- hour is older than the oldest live hour (their hashes have expired or soon will). Oldest first, so
-- repeated steps empty the stale part of the index; a pair recorded again meanwhile has a newer score
-- and is never removed.
-- Keys: index (the stats index zset: "<context>\t<type>" -> latest hour recorded, unix s)
-- Args (reader.read_call, CALLS.index_prune): the header (no version, time 0: it reads none, no
--   windows), then
--   oldest_hour  the oldest live hour (unix s)
--   batch        most entries removed by this call
-- Reply (reader.answer, CALLS.index_prune): removed, the entries removed (fewer than `batch`: none
--   stale is left)
local function index_prune(keys, args)
  local index_key = keys[1]
  local _, arg = reader.read_call(args, CALLS.index_prune)
  local stale = redis.call('ZRANGE', index_key, '-inf', '(' .. arg.oldest_hour, 'BYSCORE', 'LIMIT', 0, tonumber(arg.batch))
  if #stale > 0 then redis.call('ZREM', index_key, unpack(stale)) end
  return reader.answer(CALLS.index_prune, { removed = #stale })
end
