import { COMPACTION_RECORD_ARRAYS } from '../../repository/CompactionRecord.js';

/**
 * Lua scripts of the Redis repository. Each runs atomically on the server, so an append (idempotency check,
 * log push, version bump) and a compaction (version check, archive, window swap, version bump) are each one
 * indivisible step, whatever other clients do.
 *
 * Per-session keys (all share the `{sessionId}` hash tag): KEYS[1] session hash, KEYS[2] events hash
 * (event id → flag + JSON, flag '1' = archived), KEYS[3] active id list, KEYS[4] archived id list,
 * KEYS[5] set of ids appended already archived (they join the archive at the next compaction), and, where a
 * script takes it, KEYS[6] the compaction-record hash ('c:<id>' → record JSON, 'r:<id>' → reverted-at ms)
 * and the applied-writes sorted set (see APPLIED).
 */

/**
 * Aligns the expiry of the first six per-session keys with the session's expiresAt (ms), or removes it when
 * there is none. The applied-writes set keeps its own expiry (APPLIED), never later than the session's.
 */
const ALIGN_TTL = `
local function align_ttl(keys)
  local at = redis.call('HGET', keys[1], 'expiresAt')
  for k = 1, math.min(#keys, 6) do
    if at and at ~= '' then redis.call('PEXPIREAT', keys[k], at) else redis.call('PERSIST', keys[k]) end
  end
end
local function push_all(key, ids)
  for s = 1, #ids, 1000 do
    redis.call('RPUSH', key, unpack(ids, s, math.min(s + 999, #ids)))
  end
end
`;

/**
 * (id, value) pairs of a write, given inline in ARGV or staged beforehand (STAGE_SCRIPT) in a hash of the same
 * session, field = position, value = '<byte length of id>:' .. id .. value. Staging keeps every call bounded
 * (a 200,000-event compaction is many small calls and one commit) while the commit stays one atomic script.
 * `staged` is '' for inline pairs (from ARGV[first]) or the number of staged pairs; nil when one is missing
 * (the stage expired).
 */
const PAIRS = `
local function read_pairs(stage_key, staged, first)
  local ids, vals = {}, {}
  if staged == '' then
    for i = first, #ARGV, 2 do ids[#ids + 1] = ARGV[i]; vals[#vals + 1] = ARGV[i + 1] end
    return ids, vals
  end
  for p = 1, tonumber(staged) do
    local packed = redis.call('HGET', stage_key, tostring(p))
    if not packed then return nil end
    local len = string.match(packed, '^(%d+):')
    local start = #len + 2
    ids[p] = string.sub(packed, start, start + tonumber(len) - 1)
    vals[p] = string.sub(packed, start + tonumber(len))
  end
  return ids, vals
end
`;

/**
 * KEYS[1] a stage hash (same hash tag as its session). ARGV: expiry (ms), then (position, packed pair) pairs.
 * Idempotent (a re-send writes the same fields). The stage expires by itself if its commit never comes.
 */
export const STAGE_SCRIPT = `
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

/**
 * The tokens of a session's recently applied compactions and metadata writes: a sorted set, token → server
 * time (ms) of the write. A call re-sent after a lost reply carries the token of its first send, so finding
 * it here means "already applied" whatever other writers did in between (a single last-token field would be
 * overwritten by them). Each write drops the tokens older than the retention and sets the key to expire one
 * retention after the newest (with key expiry from the session, no later than the session's expiresAt), so
 * the set holds only the writes of the last retention period and an idle session's set goes by itself.
 */
const APPLIED = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function applied(key, token)
  return redis.call('ZSCORE', key, token) ~= false
end
local function record_applied(key, token, retention_ms, session_key, ttl_flag)
  local now = now_ms()
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - retention_ms))
  redis.call('ZADD', key, now, token)
  local expire_at = now + retention_ms
  if ttl_flag == '1' then
    local at = tonumber(redis.call('HGET', session_key, 'expiresAt') or '')
    if at and at < expire_at then expire_at = at end
  end
  redis.call('PEXPIREAT', key, expire_at)
end
local function cap_expiry(key, at)
  local left = redis.call('PTTL', key)
  if left == -2 then return end
  if left == -1 or now_ms() + left > tonumber(at) then redis.call('PEXPIREAT', key, at) end
end
`;

/** ARGV: event id, encoded value, ttl flag. Returns -1 missing session, 0 replay, 1 appended. */
export const APPEND_SCRIPT = `${ALIGN_TTL}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[1])
if string.sub(ARGV[2], 1, 1) == '1' then redis.call('SADD', KEYS[5], ARGV[1]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
if ARGV[3] == '1' then align_ttl(KEYS) end
return 1
`;

/**
 * KEYS[7] the applied-writes set, KEYS[8] the stage hash (see PAIRS). ARGV: expected version, ttl flag, number
 * of archived events, a token unique to the call, a field to write into the record hash KEYS[6] ('' = none)
 * and its value, a record field that must exist ('' = none), the applied-token retention (ms), a second field
 * to write into KEYS[6] ('' = none: a record's summary 's:<id>') and its value, the number of staged pairs
 * ('' = inline), then inline (id, value) pairs: those of the archived events, then those of the retained ones.
 * Returns -1 missing session, -4 missing record, -5 stage expired, 0 stale version, 1 committed — also when
 * this very call (same token) committed before: a re-send, even after other compactions. The record fields are
 * written only with a committed compaction (a compaction record and its summary, or a revert's mark). Touches
 * only the active window and the given events: cost independent of the archive's length.
 */
export const COMPACT_SCRIPT = `${ALIGN_TTL}${APPLIED}${PAIRS}
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return -1 end
if applied(KEYS[7], ARGV[4]) then return 1 end
if version ~= ARGV[1] then return 0 end
if ARGV[7] ~= '' and redis.call('HEXISTS', KEYS[6], ARGV[7]) == 0 then return -4 end
local ids, vals = read_pairs(KEYS[8], ARGV[11], 12)
if not ids then return -5 end
local active = redis.call('LRANGE', KEYS[3], 0, -1)
local was_active = {}
for _, id in ipairs(active) do was_active[id] = true end
local keep = {}
local to_archive = {}
local pending = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[5])) do pending[id] = true end
for _, id in ipairs(active) do
  if pending[id] then to_archive[#to_archive + 1] = id; keep[id] = true end
end
redis.call('DEL', KEYS[5])
local archived_count = tonumber(ARGV[3])
for k = 1, archived_count do
  redis.call('HSET', KEYS[2], ids[k], vals[k])
  to_archive[#to_archive + 1] = ids[k]
  keep[ids[k]] = true
end
local window = {}
for k = archived_count + 1, #ids do
  local id = ids[k]
  if not was_active[id] and not keep[id] then
    local old = redis.call('HGET', KEYS[2], id)
    -- An id is unique per session: a retained copy of an archived event replaces it (rare: an O(archive) scan).
    if old and string.sub(old, 1, 1) == '1' then redis.call('LREM', KEYS[4], 0, id) end
  end
  redis.call('HSET', KEYS[2], id, vals[k])
  window[#window + 1] = id
  keep[id] = true
end
for _, id in ipairs(active) do
  if not keep[id] then redis.call('HDEL', KEYS[2], id) end
end
push_all(KEYS[4], to_archive)
redis.call('DEL', KEYS[3])
push_all(KEYS[3], window)
redis.call('HINCRBY', KEYS[1], 'version', 1)
-- The token's field of layout version 3 and earlier, now in the applied-writes set.
redis.call('HDEL', KEYS[1], 'compaction')
if ARGV[5] ~= '' then redis.call('HSET', KEYS[6], ARGV[5], ARGV[6]) end
if ARGV[9] ~= '' then redis.call('HSET', KEYS[6], ARGV[9], ARGV[10]) end
if ARGV[2] == '1' then align_ttl(KEYS) end
record_applied(KEYS[7], ARGV[4], tonumber(ARGV[8]), KEYS[1], ARGV[2])
return 1
`;

/**
 * Compare-and-set of a session's metadata: KEYS[1] the session hash, KEYS[2] the applied-writes set; ARGV:
 * the metadata JSON as read ('' = none), the new metadata JSON, a token unique to the call, the applied-token
 * retention (ms), ttl flag. Returns -1 missing session, 0 when the metadata changed since it was read (the
 * caller re-reads and re-applies its update), 1 written — also when this very call (same token) wrote before:
 * a re-send after a lost reply, even when other writers changed the metadata since. The token is looked up
 * first: a re-send must not apply again even if the metadata came back to the value it read.
 */
export const SET_METADATA_SCRIPT = `${APPLIED}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if applied(KEYS[2], ARGV[3]) then return 1 end
if (redis.call('HGET', KEYS[1], 'metadata') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'metadata', ARGV[2])
-- The token's field of layout version 3 and earlier, now in the applied-writes set.
redis.call('HDEL', KEYS[1], 'metadataWrite')
record_applied(KEYS[2], ARGV[3], tonumber(ARGV[4]), KEYS[1], ARGV[5])
return 1
`;

/**
 * A consistent snapshot of the log in one call. ARGV[1]: 'all' (archive then window), 'active' (window only);
 * ARGV[2]: when set, only the newest N ids of that sequence; with ARGV[3] (an offset) too, the N ids from that
 * position on instead (a page: a cold index is built in bounded reads). Returns the encoded values in log order.
 */
export const READ_SCRIPT = `
local ids = {}
local function append_range(key, from, to)
  for _, id in ipairs(redis.call('LRANGE', key, from, to)) do ids[#ids + 1] = id end
end
local n = tonumber(ARGV[2])
local offset = tonumber(ARGV[3])
if offset then
  local from, to = offset, offset + n - 1
  if ARGV[1] ~= 'active' then
    local archived_len = redis.call('LLEN', KEYS[4])
    if from < archived_len then append_range(KEYS[4], from, math.min(to, archived_len - 1)) end
    from = math.max(0, from - archived_len)
    to = to - archived_len
  end
  if to >= 0 then append_range(KEYS[3], from, to) end
elseif ARGV[1] == 'active' then
  if n then append_range(KEYS[3], -n, -1) else append_range(KEYS[3], 0, -1) end
else
  if n then
    local active_len = redis.call('LLEN', KEYS[3])
    if active_len < n then append_range(KEYS[4], -(n - active_len), -1) end
    append_range(KEYS[3], -n, -1)
  else
    append_range(KEYS[4], 0, -1)
    append_range(KEYS[3], 0, -1)
  end
end
local out = {}
for s = 1, #ids, 1000 do
  local values = redis.call('HMGET', KEYS[2], unpack(ids, s, math.min(s + 999, #ids)))
  for _, v in ipairs(values) do if v then out[#out + 1] = v end end
end
return out
`;

/**
 * KEYS[1] session hash, KEYS[2] new user's set, KEYS[3] expiry zset, KEYS[4] previous user's set, KEYS[5..8]
 * the other per-session keys, KEYS[9] the id's tombstone hash, KEYS[10] the tombstone index, KEYS[11] the
 * compaction records, KEYS[12] the applied-writes set (its expiry only shortened, to the new expiresAt),
 * KEYS[13] the new owner's erasure mark (USER_ERASING_KEY). ARGV: previous userId ('' = none), id, userId,
 * createdAt, expiresAt ('' = never), metadata JSON, ttl flag, the owner hash whose tombstone may be replaced
 * ('' = none: a tombstone refuses the save), and a token unique to the call ('' = none), stored in the
 * session as 'createToken'. Returns 0 when the stored userId changed since it was read (the caller retries),
 * -2 when a tombstone refuses the id, -5 when the id is new and its owner's erasure is in progress, 1 saved —
 * also when this very call (same token) created the session before: a re-send after a lost reply.
 */
export const SAVE_SCRIPT = `${APPLIED}
local previous = redis.call('HGET', KEYS[1], 'userId')
if previous and ARGV[9] ~= '' and redis.call('HGET', KEYS[1], 'createToken') == ARGV[9] then return 1 end
if (previous or '') ~= ARGV[1] then return 0 end
local tomb = redis.call('HGET', KEYS[9], 'ownerHash')
if tomb then
  if ARGV[8] == '' or tomb ~= ARGV[8] then return -2 end
end
if not previous and redis.call('EXISTS', KEYS[13]) == 1 then return -5 end
if tomb then
  redis.call('DEL', KEYS[9])
  redis.call('ZREM', KEYS[10], ARGV[2])
end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'userId', ARGV[3], 'createdAt', ARGV[4], 'expiresAt', ARGV[5], 'metadata', ARGV[6])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'createToken', ARGV[9]) end
redis.call('HSETNX', KEYS[1], 'version', 0)
if previous and previous ~= ARGV[3] then redis.call('SREM', KEYS[4], ARGV[2]) end
redis.call('SADD', KEYS[2], ARGV[2])
if ARGV[5] == '' then redis.call('ZREM', KEYS[3], ARGV[2]) else redis.call('ZADD', KEYS[3], ARGV[5], ARGV[2]) end
if ARGV[7] == '1' then
  local keys = { KEYS[1], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[11] }
  for _, k in ipairs(keys) do
    if ARGV[5] ~= '' then redis.call('PEXPIREAT', k, ARGV[5]) else redis.call('PERSIST', k) end
  end
  if ARGV[5] ~= '' then cap_expiry(KEYS[12], ARGV[5]) end
end
return 1
`;

/** Reads the packed (id, value) pairs of FORK_SCRIPT: each as '<bytes>:<bytes of id>' then '<bytes>:<bytes of value>'. */
const UNPACK = `
local function unpack_pairs(blob)
  local pairs_out = {}
  local pos = 1
  local function take()
    local colon = string.find(blob, ':', pos, true)
    local n = tonumber(string.sub(blob, pos, colon - 1))
    local value = string.sub(blob, colon + 1, colon + n)
    pos = colon + n + 1
    return value
  end
  while pos <= #blob do
    local id = take()
    pairs_out[#pairs_out + 1] = { id, take() }
  end
  return pairs_out
end
`;

/**
 * A whole fork in one script, so it is all or nothing. KEYS[1] the source's session hash, KEYS[2..6] the
 * fork's per-session keys, KEYS[7] the owner's user set, KEYS[8] expiry zset, KEYS[9] the fork id's
 * tombstone hash, KEYS[10] the owner's erasure mark. ARGV: a token unique to the call, the source's expected
 * version, its expected purge generation ('' = unchecked), the fork's id, userId, createdAt, expiresAt
 * ('' = never), metadata JSON, ttl flag, then the events packed into one argument (UNPACK), so a fork of any
 * length is a fixed number of arguments. Returns 1 forked — also when this very call (same token) forked
 * before: a re-send after a lost reply —, 0 the source changed, -1 no source, -2 tombstoned id, -5 the
 * owner's erasure is in progress, 2 the id is taken.
 */
export const FORK_SCRIPT = `${ALIGN_TTL}${UNPACK}
if ARGV[1] ~= '' and redis.call('HGET', KEYS[2], 'createToken') == ARGV[1] then return 1 end
local source = redis.call('HMGET', KEYS[1], 'version', 'purgeGeneration')
if not source[1] then return -1 end
if source[1] ~= ARGV[2] then return 0 end
if ARGV[3] ~= '' and (source[2] or '0') ~= ARGV[3] then return 0 end
if redis.call('EXISTS', KEYS[9]) == 1 then return -2 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
if redis.call('EXISTS', KEYS[10]) == 1 then return -5 end
redis.call('HSET', KEYS[2], 'id', ARGV[4], 'userId', ARGV[5], 'createdAt', ARGV[6], 'expiresAt', ARGV[7],
  'metadata', ARGV[8], 'version', 0, 'createToken', ARGV[1])
redis.call('SADD', KEYS[7], ARGV[4])
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[8], ARGV[7], ARGV[4]) end
local added = 0
for _, pair in ipairs(unpack_pairs(ARGV[10])) do
  if redis.call('HSETNX', KEYS[3], pair[1], pair[2]) == 1 then
    redis.call('RPUSH', KEYS[4], pair[1])
    if string.sub(pair[2], 1, 1) == '1' then redis.call('SADD', KEYS[6], pair[1]) end
    added = added + 1
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[2], 'version', added) end
if ARGV[9] == '1' then align_ttl({ KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6] }) end
return 1
`;

/**
 * KEYS[1..5] per-session keys, KEYS[6] the owner's user set, KEYS[7] expiry zset, KEYS[8] compaction records,
 * KEYS[9] the applied-writes set. ARGV: userId read before ('' = none), id. Returns 0 when the owner changed
 * since it was read (the caller retries).
 */
export const DELETE_SCRIPT = `
local owner = redis.call('HGET', KEYS[1], 'userId')
if (owner or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8], KEYS[9])
if owner then redis.call('SREM', KEYS[6], ARGV[2]) end
redis.call('ZREM', KEYS[7], ARGV[2])
return 1
`;

/**
 * APPEND_SCRIPT for a batch, in order. KEYS[6] the stage hash (see PAIRS). ARGV: ttl flag, the number of
 * staged pairs ('' = inline), then inline (id, value) pairs. Returns -1 missing session, -5 stage expired,
 * else how many ids were new (the version grows by that much).
 */
export const APPEND_MANY_SCRIPT = `${ALIGN_TTL}${PAIRS}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local ids, vals = read_pairs(KEYS[6], ARGV[2], 3)
if not ids then return -5 end
local added = 0
for k = 1, #ids do
  if redis.call('HSETNX', KEYS[2], ids[k], vals[k]) == 1 then
    redis.call('RPUSH', KEYS[3], ids[k])
    if string.sub(vals[k], 1, 1) == '1' then redis.call('SADD', KEYS[5], ids[k]) end
    added = added + 1
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[1], 'version', added) end
if ARGV[1] == '1' then align_ttl(KEYS) end
return added
`;

/** Event JSON fields read without decoding: inside JSON strings every quote is escaped, so `"name":` only matches a top-level field. */
const FIELDS = `
local function is_synthetic(value) return string.find(value, '"synthetic":true', 1, true) ~= nil end
local function timestamp_of(value) return tonumber(string.match(value, '"timestamp":(%-?%d+)')) end
local function newest_timestamp(keys)
  local id = redis.call('LINDEX', keys[3], -1) or redis.call('LINDEX', keys[4], -1)
  if not id then return nil end
  local value = redis.call('HGET', keys[2], id)
  if not value then return nil end
  return timestamp_of(value)
end
`;

/**
 * KEYS[1..5] per-session keys, KEYS[6] the owner's user set, KEYS[7] expiry zset, KEYS[8] tombstone hash,
 * KEYS[9] tombstone index, KEYS[10] compaction records, KEYS[11] the applied-writes set. ARGV: owner read
 * before ('' = none), id, write tombstone ('1'/'0'), owner hash, deletedAt, expiresAt ('' = never),
 * idleBefore ('' = unconditional). Returns 0 when the owner changed (the caller retries), -1 when there is no
 * session, -3 when it is not idle, else the counts by kind {active, archived, summaries, masked copies}.
 * O(events): every event is decoded once to classify it.
 */
export const ERASE_SCRIPT = `${FIELDS}
local owner = redis.call('HGET', KEYS[1], 'userId')
if (owner or '') ~= ARGV[1] then return 0 end
if not owner then return -1 end
if ARGV[7] ~= '' then
  local last = tonumber(redis.call('HGET', KEYS[1], 'createdAt'))
  local newest = newest_timestamp(KEYS)
  if newest and newest > last then last = newest end
  if last >= tonumber(ARGV[7]) then return -3 end
end
local counts = { 0, 0, 0, 0 }
for _, value in ipairs(redis.call('HVALS', KEYS[2])) do
  local stored = cjson.decode(string.sub(value, 2))
  local meta = type(stored.metadata) == 'string' and cjson.decode(stored.metadata) or {}
  if stored.synthetic == true then counts[3] = counts[3] + 1
  elseif type(meta.maskedFrom) == 'string' then counts[4] = counts[4] + 1
  elseif string.sub(value, 1, 1) == '1' then counts[2] = counts[2] + 1
  else counts[1] = counts[1] + 1 end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[10], KEYS[11])
redis.call('SREM', KEYS[6], ARGV[2])
redis.call('ZREM', KEYS[7], ARGV[2])
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[8])
  redis.call('HSET', KEYS[8], 'ownerHash', ARGV[4], 'deletedAt', ARGV[5], 'expiresAt', ARGV[6])
  redis.call('ZADD', KEYS[9], ARGV[6] == '' and '+inf' or ARGV[6], ARGV[2])
end
return counts
`;

/**
 * KEYS[1..5] per-session keys. ARGV: expected version, ttl flag, then (id, JSON without the flag) pairs.
 * Returns -1 missing session, {-2, id} missing event, 0 stale version, 1 rewritten (flags kept, version +1).
 */
export const REWRITE_SCRIPT = `${ALIGN_TTL}
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return -1 end
-- The version first: a stale rewrite loses its compare-and-set even when its events are gone by now.
if version ~= ARGV[1] then return 0 end
local flags = {}
for i = 3, #ARGV, 2 do
  local old = redis.call('HGET', KEYS[2], ARGV[i])
  if not old then return { -2, ARGV[i] } end
  flags[ARGV[i]] = string.sub(old, 1, 1)
end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], flags[ARGV[i]] .. ARGV[i + 1]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
if ARGV[2] == '1' then align_ttl(KEYS) end
return 1
`;

/**
 * KEYS[1..6] per-session keys. ARGV: before (ms, '' = none), keepLast ('' = none), limit. Removes archived
 * non-synthetic events, oldest first: those older than `before`, and those beyond the newest `keepLast`
 * archived events. The archive in log order is the archived list, then ids appended already archived (in
 * the active list, tracked by the pending set). Compaction records that archived a removed event go too (a
 * revert could not restore it). Returns the removed ids. The version is not touched; the session's
 * 'purgeGeneration' field grows by one when anything was removed.
 */
export const PURGE_ARCHIVED_SCRIPT = `${FIELDS}
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local archive = redis.call('LRANGE', KEYS[4], 0, -1)
local listed = #archive
local pending = redis.call('SMEMBERS', KEYS[5])
if #pending > 0 then
  local is_pending = {}
  for _, id in ipairs(pending) do is_pending[id] = true end
  for _, id in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    if is_pending[id] then archive[#archive + 1] = id end
  end
end
local before = tonumber(ARGV[1])
local over = 0
if ARGV[2] ~= '' then over = math.max(0, #archive - tonumber(ARGV[2])) end
local limit = tonumber(ARGV[3])
local doomed = {}
local removed = {}
local i = 1
while i <= #archive and #removed < limit do
  -- Past the count boundary only the time criterion can remove more.
  if i > over and not before then break end
  local last = math.min(i + 499, #archive)
  local values = redis.call('HMGET', KEYS[2], unpack(archive, i, last))
  for j = 1, #values do
    local id = archive[i + j - 1]
    local v = values[j]
    if #removed < limit and v and not is_synthetic(v) then
      local position = i + j - 1
      local ts = timestamp_of(v)
      if position <= over or (before and ts and ts < before) then
        doomed[id] = true
        removed[#removed + 1] = id
      end
    end
  end
  i = last + 1
end
if #removed == 0 then return removed end
-- The version stays (no compaction loses its CAS to retention); readers see the purge by this counter.
redis.call('HINCRBY', KEYS[1], 'purgeGeneration', 1)
for s = 1, #removed, 1000 do
  redis.call('HDEL', KEYS[2], unpack(removed, s, math.min(s + 999, #removed)))
end
-- The archived list: trimmed when the removed ids are its head (the usual case), rebuilt otherwise.
local head = 0
while head < listed and doomed[archive[head + 1]] do head = head + 1 end
local listed_removed = 0
for k = 1, listed do if doomed[archive[k]] then listed_removed = listed_removed + 1 end end
if listed_removed == head then
  if head > 0 then redis.call('LTRIM', KEYS[4], head, -1) end
else
  local kept = {}
  for k = 1, listed do if not doomed[archive[k]] then kept[#kept + 1] = archive[k] end end
  redis.call('DEL', KEYS[4])
  for s = 1, #kept, 1000 do redis.call('RPUSH', KEYS[4], unpack(kept, s, math.min(s + 999, #kept))) end
end
for k = listed + 1, #archive do
  if doomed[archive[k]] then
    redis.call('LREM', KEYS[3], 1, archive[k])
    redis.call('SREM', KEYS[5], archive[k])
  end
end
local records = redis.call('HGETALL', KEYS[6])
for r = 1, #records, 2 do
  local field = records[r]
  if string.sub(field, 1, 2) == 'c:' then
    local record = cjson.decode(records[r + 1])
    for _, id in ipairs(record.archivedEventIds or {}) do
      if doomed[id] then
        redis.call('HDEL', KEYS[6], field, 'r:' .. string.sub(field, 3), 's:' .. string.sub(field, 3))
        break
      end
    end
  end
end
return removed
`;

/**
 * The compaction summaries of one session: KEYS[1] the compaction-record hash. Returns (summary JSON, reverted
 * at ms or '') per record, in no order. The summary is the 's:<id>' field written with the record; a record
 * written before summaries were (no such field) is counted here, on the server, and its summary written back,
 * so the ids never cross the wire and each old record is decoded once.
 */
export const LIST_SUMMARIES_SCRIPT = `
local counts = { ${Object.entries(COMPACTION_RECORD_ARRAYS)
  .map(([array, count]) => `${array} = '${count}'`)
  .join(', ')} }
local out = {}
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'c:' then
    local id = string.sub(field, 3)
    local summary = redis.call('HGET', KEYS[1], 's:' .. id)
    if not summary then
      local record = cjson.decode(redis.call('HGET', KEYS[1], field))
      for array, count in pairs(counts) do
        record[count] = type(record[array]) == 'table' and #record[array] or 0
        record[array] = nil
      end
      summary = cjson.encode(record)
      redis.call('HSET', KEYS[1], 's:' .. id, summary)
    end
    out[#out + 1] = summary
    out[#out + 1] = redis.call('HGET', KEYS[1], 'r:' .. id) or ''
  end
end
return out
`;

/**
 * KEYS: groups of 4 per session (session hash, events hash, active list, archived list). Returns, per
 * session, {userId or false, createdAt, newest event timestamp or false}.
 */
export const ACTIVITY_SCRIPT = `${FIELDS}
local out = {}
for g = 1, #KEYS, 4 do
  local keys = { KEYS[g], KEYS[g + 1], KEYS[g + 2], KEYS[g + 3] }
  local session = redis.call('HMGET', keys[1], 'userId', 'createdAt')
  local newest = newest_timestamp(keys)
  out[#out + 1] = { session[1], session[2], newest and tostring(newest) or false }
end
return out
`;

/** KEYS[1] tombstone index, KEYS[2..] tombstone hashes; ARGV: before (ms), then the ids. Re-checks each score. */
export const PURGE_TOMBSTONES_SCRIPT = `
local removed = 0
for k = 2, #KEYS do
  local id = ARGV[k]
  local score = redis.call('ZSCORE', KEYS[1], id)
  if score and tonumber(score) < tonumber(ARGV[1]) then
    redis.call('DEL', KEYS[k])
    redis.call('ZREM', KEYS[1], id)
    removed = removed + 1
  end
end
return removed
`;

/**
 * What a redaction reads (RedactionScopeRepository), narrowed on the server: KEYS[1..4] per-session keys;
 * ARGV[1] the original's id. Returns, in log order, the values that are synthetic or contain the id
 * (a superset, narrowed after decoding): a few events cross the network instead of the whole log.
 */
export const REDACTION_SCOPE_SCRIPT = `${FIELDS}
local out = {}
for _, key in ipairs({ KEYS[4], KEYS[3] }) do
  local ids = redis.call('LRANGE', key, 0, -1)
  for s = 1, #ids, 1000 do
    local values = redis.call('HMGET', KEYS[2], unpack(ids, s, math.min(s + 999, #ids)))
    for _, v in ipairs(values) do
      if v and (is_synthetic(v) or string.find(v, ARGV[1], 1, true)) then out[#out + 1] = v end
    end
  end
end
return out
`;
