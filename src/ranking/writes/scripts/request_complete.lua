-- requires: call_state, idempotency
-- request_complete: stores the whole answer of a retry-safe request on a sharded board in its ledger
-- entry (see request_claim), so that a repeat answers it byte for byte.
-- KEYS: 1
-- KEYS[1]        config hash of the ledger shard
-- ARGV[1]        now, unix milliseconds
-- ARGV[2] .. ARGV[5]: idempotency key, request fingerprint, context ("done"), retention (ms) (idem_lib)
-- ARGV[6]        the answer's body (JSON)
-- Reply: { 0, "done", body }
local function request_complete(keys, args)
  call_state.begin_call(keys, args)
  local now_ms = tonumber(ARGV[1])
  local idem = idempotency.idem_args(ARGV, 2, 'req\31')
  return idempotency.idem_finish(KEYS[1], 'cfg', idem, now_ms, { ARGV[6] })
end
