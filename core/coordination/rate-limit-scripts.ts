/**
 * The Lua scripts of the shared rate-limit counters. Each runs atomically inside Redis, on Redis's
 * own clock (`TIME`), so replicas whose clocks differ still share one timeline, and a request's
 * buckets are checked and taken in one call: no other replica's request can slip in between.
 *
 * Numbers: Redis runs Lua 5.1, whose numbers are doubles, exact for integers below 2^53. Every value
 * kept is an integer far below that (a bucket holds at most `periodMs × limit` ticks plus a settled
 * debt); a product that could pass 2^53 (`elapsed × limit`) is only compared with a stored level,
 * which it then exceeds whatever its rounding, the same reasoning as `gcra.ts`. Values are written
 * with `%.0f`, never `tostring` (whose `%.14g` would round long integers).
 *
 * GCRA state (`gcra.ts`): a hash `{at, ticks}`: the bucket's level in ticks of 1/limit ms as of
 * server time `at` ms. A missing hash is a full bucket. The hash expires once the level has run out
 * (plus a second of margin), so idle callers cost no memory.
 *
 * Concurrency state: a sorted set per slot name, member = lease id, score = the lease's expiry in
 * server ms. Expired leases (a replica that died mid-request, or lost its connection) are dropped
 * before counting, so they leak nothing beyond their TTL; a live replica renews its leases.
 */

/** Shared by the GCRA scripts: the level of bucket `key` (limit `limit`) at server time `now`. */
const LEVEL_OF = `
local function server_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function level_of(key, limit, now)
  local v = redis.call('HMGET', key, 'at', 'ticks')
  if not v[1] then return 0 end
  local at, ticks = tonumber(v[1]), tonumber(v[2])
  local elapsed = now - at
  if elapsed <= 0 then return ticks end
  local regained = elapsed * limit
  if regained >= ticks then return 0 end
  return ticks - regained
end
local function store(key, ticks, limit, now)
  if ticks <= 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, 'at', string.format('%.0f', now), 'ticks', string.format('%.0f', ticks))
  redis.call('PEXPIRE', key, string.format('%.0f', math.ceil(ticks / limit) + 1000))
end
`;

/**
 * KEYS: one hash per bucket. ARGV[1]: `take` or `peek`; then per bucket `limit`, `periodMs`, `units`
 * (units already clamped to [0, limit]). Returns `{allowed (1/0), now ms, level of each bucket
 * before the take}`. `take` stores the new levels only when every bucket allows; `peek` never writes.
 */
export const GCRA_TAKE = `${LEVEL_OF}
local now = server_now()
local take = ARGV[1] == 'take'
local levels, allowed = {}, 1
for i, key in ipairs(KEYS) do
  local limit, period, units = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  levels[i] = level_of(key, limit, now)
  if levels[i] + units * period > period * limit then allowed = 0 end
end
if take and allowed == 1 then
  for i, key in ipairs(KEYS) do
    local limit, period, units = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
    store(key, levels[i] + units * period, limit, now)
  end
end
local out = { allowed, now }
for i = 1, #levels do out[i + 2] = levels[i] end
return out
`;

/**
 * KEYS[1]: the bucket. ARGV: `limit`, `periodMs`, `deltaUnits` (an integer, either sign). Charges or
 * gives back units, never beyond a full bucket. Returns `{now ms, level after in ticks}`.
 */
export const GCRA_SETTLE = `${LEVEL_OF}
local now = server_now()
local limit, period, delta = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ticks = math.max(0, level_of(KEYS[1], limit, now) + delta * period)
store(KEYS[1], ticks, limit, now)
return { now, ticks }
`;

/**
 * KEYS: one sorted set per slot name. ARGV[1]: lease id; ARGV[2]: TTL ms; then each slot's limit.
 * Drops expired leases, then adds the lease to every set when none is full. Returns 0 when taken,
 * else the 1-based index of the first full slot (nothing taken).
 */
export const SLOT_ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now))
  if redis.call('ZCARD', key) >= tonumber(ARGV[i + 2]) then return i end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, string.format('%.0f', now + ttl), ARGV[1])
  redis.call('PEXPIRE', key, ttl)
end
return 0
`;

/**
 * KEYS: sorted sets; ARGV[1]: TTL ms; ARGV[i + 1]: the lease id held in KEYS[i]. Pushes each lease's
 * expiry to now + TTL if it is still there (a lease already expired stays gone). Returns how many
 * were renewed.
 */
export const SLOT_RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local renewed = 0
for i, key in ipairs(KEYS) do
  renewed = renewed + redis.call('ZADD', key, 'XX', 'CH', string.format('%.0f', now + ttl), ARGV[i + 1])
  redis.call('PEXPIRE', key, ttl)
end
return renewed
`;

/** KEYS: sorted sets; ARGV[1]: lease id. Removes the lease from each. */
export const SLOT_RELEASE = `
for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[1]) end
return 0
`;
