-- board_write_lib: the common start of every write to a board's items (increment, batch, like),
-- prepended after keys_lib, idem_lib and window_lib.
-- KEYS: 0
-- ARGV[1] config version, ARGV[2] now (ms), ARGV[4] W; the idempotency arguments start at
-- ARGV[idem_first + 3W] (idem_first: the script's own offset past its window arguments).

-- Refuses a stale or missing config and answers a replay. Returns the reply to answer at once (or
-- nil), then now (ms), the window count and the idempotency arguments.
local function begin_board_write(idem_first)
  local err = version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_ms = tonumber(ARGV[2])
  local window_count = tonumber(ARGV[4])
  local idem = idem_args(idem_first + 3 * window_count, '')
  return idem_begin(KEYS[1], 'cfg', idem, now_ms), now_ms, window_count, idem
end
