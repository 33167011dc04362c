-- requires: call_state
-- sweep_turn: gives the sweep of the due index to one caller per interval, fleet-wide. The time of the
-- next sweep is stored rather than left to a key expiry, so the turn follows the service's clock.
-- KEYS: 1
-- KEYS[1]        string: when (unix ms) the next sweep may start
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        sweep interval, milliseconds
-- Reply: 1 when the caller takes this sweep, else 0
local function sweep_turn(keys, args)
  call_state.begin_call(keys, args)
  local now_ms = tonumber(ARGV[1])
  if tonumber(redis.call('GET', KEYS[1]) or '0') > now_ms then return 0 end
  redis.call('SET', KEYS[1], now_ms + tonumber(ARGV[2]))
  return 1
end
