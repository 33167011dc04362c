-- module: keyspace
-- keys_lib: prepended to every script, and a module of every function library, that derives keys
-- from the keys in KEYS. A derived key keeps
-- the hash tag of the key it comes from, so the script still touches one Cluster slot.
-- KEYS: 0

-- The key `key` with its trailing `suffix` replaced by `replacement`. Raises an error when `key` does
-- not end with `suffix`: a caller passing the wrong key must fail loudly, never touch another key.
local function sibling_key(key, suffix, replacement)
  if string.sub(key, -#suffix) ~= suffix then
    error({ err = 'TB_KEY_SHAPE key "' .. key .. '" does not end with "' .. suffix .. '"' })
  end
  return string.sub(key, 1, #key - #suffix) .. replacement
end

-- sibling_key as a function of the key alone, for a module's own key beside another: sibling_of('cfg',
-- 'groups') maps "<tag>:cfg" to "<tag>:groups".
local function sibling_of(suffix, replacement)
  return function(key) return sibling_key(key, suffix, replacement) end
end

keyspace.sibling_key = sibling_key
keyspace.sibling_of = sibling_of
