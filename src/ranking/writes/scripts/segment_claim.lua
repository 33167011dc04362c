-- requires: call_state, keyspace, reader
-- segment_claim: claims segment names for a write of a sharded board before it runs on its own shard,
-- so segments.max holds per board, not per shard: the board's registry of live segments lives on
-- shard 0 ("<tag>:segclaims", segment -> claimed until, unix s), each shard's own index (segment_lib)
-- keeps refusing past the bound on its shard as before. A claim lasts until the end of the write's
-- windows' current slots' spans (what segment_add makes the segment live until at most), renewed by
-- every write naming it; a write refused after its claim leaves the claim to lapse at that time. The
-- registry expires with its latest claim.
-- Keys: cfg (shard 0's config hash: the registry is beside it, in its hash tag)
-- Args (reader.read_call, CALLS.segment_claim): the header (now, no version, no windows), then
--   max        segments.max
--   until_sec  claimed until, unix s
--   names      JSON array of the segment names (distinct)
-- Reply (reader.answer, CALLS.segment_claim): claimed (the number of names newly claimed)
-- Errors: TB_SEGMENT_LIMIT <live> <max> <new> board (nothing claimed)
local function segment_claim(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.segment_claim)
  local claims = keyspace.sibling_key(cfg_key, 'cfg', 'segclaims')
  local now_sec, max, until_sec = header.now_sec, tonumber(arg.max), tonumber(arg.until_sec)
  local names = cjson.decode(arg.names)
  redis.call('ZREMRANGEBYSCORE', claims, '-inf', now_sec)
  local new = 0
  for _, name in ipairs(names) do
    if not redis.call('ZSCORE', claims, name) then new = new + 1 end
  end
  if new > 0 then
    local live = redis.call('ZCARD', claims)
    if live + new > max then return redis.error_reply('TB_SEGMENT_LIMIT ' .. live .. ' ' .. max .. ' ' .. new .. ' board') end
  end
  for _, name in ipairs(names) do redis.call('ZADD', claims, 'GT', until_sec, name) end
  -- The registry goes by itself when its last claim lapses (no write may come to prune it), relative
  -- to the caller's clock as every time here.
  local latest = redis.call('ZRANGE', claims, -1, -1, 'WITHSCORES')
  redis.call('EXPIRE', claims, math.max(1, tonumber(latest[2]) - now_sec))
  return reader.answer(CALLS.segment_claim, { claimed = new })
end
