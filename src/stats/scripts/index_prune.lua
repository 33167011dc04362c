-- index_prune: one bounded step of the stats index pruner: removes up to a page of pairs whose latest
-- hour is older than the oldest live hour (their hashes have expired or soon will). Oldest first, so
-- repeated steps empty the stale part of the index; a pair recorded again meanwhile has a newer score
-- and is never removed.
-- KEYS: 1
-- KEYS[1]        the stats index zset: "<context>\t<type>" -> latest hour recorded (unix s)
-- ARGV[1]        the oldest live hour (unix s)
-- ARGV[2]        most entries removed by this call
-- Reply: the number of entries removed (fewer than ARGV[2]: none stale is left)
local function index_prune(keys, args)
  local stale = redis.call('ZRANGE', keys[1], '-inf', '(' .. args[1], 'BYSCORE', 'LIMIT', 0, tonumber(args[2]))
  if #stale > 0 then redis.call('ZREM', keys[1], unpack(stale)) end
  return #stale
end
