-- requires: call_state, keyspace
-- segment_claim: claims segment names for a write of a sharded board before it runs on its own shard,
-- so segments.max holds per board, not per shard: the board's registry of live segments lives on
-- shard 0 ("<tag>:segclaims", segment -> claimed until, unix s), each shard's own index (segment_lib)
-- keeps refusing past the bound on its shard as before. A claim lasts until the end of the write's
-- windows' current slots' spans (what segment_add makes the segment live until at most), renewed by
-- every write naming it; a write refused after its claim leaves the claim to lapse at that time. The
-- registry expires with its latest claim.
-- KEYS: 1
-- KEYS[1]        shard 0's config hash (the registry is beside it, in its hash tag)
-- ARGV[1]        now, unix s
-- ARGV[2]        segments.max
-- ARGV[3]        claimed until, unix s
-- ARGV[4 ...]    the segment names (distinct)
-- Reply: the number of names newly claimed
-- Errors: TB_SEGMENT_LIMIT <live> <max> <new> board (nothing claimed)
local function segment_claim(keys, args)
  call_state.begin_call(keys, args)
  local claims = keyspace.sibling_key(KEYS[1], 'cfg', 'segclaims')
  local now_sec, max, until_sec = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
  redis.call('ZREMRANGEBYSCORE', claims, '-inf', now_sec)
  local new = 0
  for i = 4, #ARGV do
    if not redis.call('ZSCORE', claims, ARGV[i]) then new = new + 1 end
  end
  if new > 0 then
    local live = redis.call('ZCARD', claims)
    if live + new > max then return redis.error_reply('TB_SEGMENT_LIMIT ' .. live .. ' ' .. max .. ' ' .. new .. ' board') end
  end
  for i = 4, #ARGV do redis.call('ZADD', claims, 'GT', until_sec, ARGV[i]) end
  -- The registry goes by itself when its last claim lapses (no write may come to prune it), relative
  -- to the caller's clock as every time here.
  local latest = redis.call('ZRANGE', claims, -1, -1, 'WITHSCORES')
  redis.call('EXPIRE', claims, math.max(1, tonumber(latest[2]) - now_sec))
  return new
end
