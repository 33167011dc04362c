-- requires: call_state, reader
-- lease: takes or renews the lease on one ingest source: only its holder consumes the source, so
-- messages are applied in id order. Each new holder gets a higher epoch (fencing, see ingest_apply).
-- Keys: lease (string "<instance> <epoch>", expiring), epoch_key (the source's epoch counter)
-- Args (reader.read_call, CALLS.lease): the header (no version, time 0: it reads none, no windows), then
--   instance  the calling instance
--   lease_ms  lease length (ms)
--   release   1: release instead
-- Reply (reader.answer, CALLS.lease): epoch, the caller's while it holds the lease, 0 when another
--   instance holds it (or released)
local function lease(keys, args)
  local lease_key, epoch_key = keys[1], keys[2]
  local _, arg = call_state.begin_named_call(keys, args, CALLS.lease)
  local instance = arg.instance
  local held = redis.call('GET', lease_key)
  local owner, epoch = nil, nil
  if held then owner, epoch = string.match(held, '^(%S+) (%d+)$') end
  if arg.release == '1' then
    if owner == instance then redis.call('DEL', lease_key) end
    return reader.answer(CALLS.lease, { epoch = 0 })
  end
  if owner == instance then
    redis.call('PEXPIRE', lease_key, arg.lease_ms)
    return reader.answer(CALLS.lease, { epoch = tonumber(epoch) })
  end
  if held then return reader.answer(CALLS.lease, { epoch = 0 }) end
  local next_epoch = redis.call('INCR', epoch_key)
  redis.call('SET', lease_key, instance .. ' ' .. next_epoch, 'PX', arg.lease_ms)
  return reader.answer(CALLS.lease, { epoch = next_epoch })
end
