-- requires: call_state, reader
-- sweep_turn: gives the sweep of the due index to one caller per interval, fleet-wide. The time of the
-- next sweep is stored rather than left to a key expiry, so the turn follows the service's clock.
-- Keys: sweep (string: when (unix ms) the next sweep may start)
-- Args (reader.read_call, CALLS.sweep_turn): the header (no config version, now, no windows), then
--   interval_ms (the sweep interval)
-- Reply (reader.answer, CALLS.sweep_turn): turn (1 when the caller takes this sweep, else 0)
local function sweep_turn(keys, args)
  local sweep_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.sweep_turn)
  local now_ms = header.now_ms
  if tonumber(redis.call('GET', sweep_key) or '0') > now_ms then return reader.answer(CALLS.sweep_turn, { turn = 0 }) end
  redis.call('SET', sweep_key, now_ms + tonumber(arg.interval_ms))
  return reader.answer(CALLS.sweep_turn, { turn = 1 })
end
