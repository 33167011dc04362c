-- requires: call_state
-- lease: takes or renews the lease on one ingest source: only its holder consumes the source, so
-- messages are applied in id order. Each new holder gets a higher epoch (fencing, see ingest_apply).
-- KEYS: 2
-- KEYS[1]  the lease (string "<instance> <epoch>", expiring)
-- KEYS[2]  the source's epoch counter
-- ARGV[1]  the calling instance, ARGV[2] lease length (ms), ARGV[3] 1: release instead
-- Reply: the caller's epoch while it holds the lease, 0 when another instance holds it (or released)
local function lease(keys, args)
  call_state.begin_call(keys, args)
  local held = redis.call('GET', KEYS[1])
  local owner, epoch = nil, nil
  if held then owner, epoch = string.match(held, '^(%S+) (%d+)$') end
  if ARGV[3] == '1' then
    if owner == ARGV[1] then redis.call('DEL', KEYS[1]) end
    return 0
  end
  if owner == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return tonumber(epoch)
  end
  if held then return 0 end
  local next_epoch = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. next_epoch, 'PX', ARGV[2])
  return next_epoch
end
