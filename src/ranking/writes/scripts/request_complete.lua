-- requires: call_state, idempotency, reader
-- request_complete: stores the whole answer of a retry-safe request on a sharded board in its ledger
-- entry (see request_claim), so that a repeat answers it byte for byte.
-- Keys: cfg (config hash of the ledger shard)
-- Args (reader.read_call, CALLS.request_complete): the header (now, no version, no windows), then
--   idem_key, idem_fingerprint, idem_context ("done"), idem_retention   idem_lib's; body (the answer's
--   JSON)
-- Reply (reader.answer, CALLS.request_complete, after idem_lib's outcome 0 and context "done"): body
local function request_complete(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.request_complete)
  local idem = idempotency.idem_of(arg, 'req\31')
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reader.answer(CALLS.request_complete, { body = arg.body }))
end
