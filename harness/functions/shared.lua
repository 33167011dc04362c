-- module: shared
-- shared: code every function of the test library calls, defined once at the library's top level.

-- Calls of count_calls since the library was loaded on this node. The top level of a function library
-- runs at FUNCTION LOAD only, not per call, so a top-level local lives from one call to the next
-- (until the next load): per-call state must never live there.
shared.calls = 0

local function header_reply(h)
  local reply = { h.version, h.now_ms, h.now_sec, h.budget, #h.windows }
  for _, w in ipairs(h.windows) do
    reply[#reply + 1] = w.period_sec
    reply[#reply + 1] = w.interval_sec
    reply[#reply + 1] = w.created_ms
    reply[#reply + 1] = w.origin_sec
  end
  return reply
end

local function add_to(key, amount)
  return redis.call('INCRBY', key, amount)
end

shared.header_reply = header_reply
shared.add_to = add_to
