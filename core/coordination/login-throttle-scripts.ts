/**
 * The login throttle's Lua scripts (`redis-login-throttle.ts`): the rules of
 * `core/coordination/login-throttle.ts`, on Redis's clock, over four sorted sets per attempt:
 * KEYS[1] the address's failures, KEYS[2] the username's failures (member = attempt id, score = ms),
 * KEYS[3] the address's attempts in flight, KEYS[4] the username's (score = when the reservation
 * expires: a replica that dies mid-check leaks it for `pendingTtlMs` at most).
 */

/**
 * ARGV: windowMs, maxFailures, attemptId, pendingTtlMs, backoffBaseMs. Returns 0 with the attempt
 * reserved, or the ms to wait (> 0) with nothing reserved.
 */
export const BEGIN_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local maxFailures = tonumber(ARGV[2])
local ttl = tonumber(ARGV[4])
local base = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local ipFailures = redis.call('ZCARD', KEYS[1])
local ipPending = redis.call('ZCARD', KEYS[3])
local allowance = 4 * maxFailures
local wait = 0
if ipFailures + ipPending >= allowance then
  if ipPending > 0 then
    wait = base
  else
    local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
    local backoff = math.min(window, base * 2 ^ math.min(30, ipFailures - allowance))
    wait = math.max(0, last + backoff - now)
  end
end
if ipFailures + ipPending > 0 then
  local userFailures = redis.call('ZCARD', KEYS[2])
  local userWait = 0
  if userFailures >= maxFailures then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[2], userFailures - maxFailures, userFailures - maxFailures, 'WITHSCORES')[2])
    userWait = math.max(0, oldest + window - now)
  elseif userFailures + redis.call('ZCARD', KEYS[4]) >= maxFailures then
    userWait = base
  end
  wait = math.max(wait, userWait)
end
if wait > 0 then return math.ceil(wait) end
redis.call('ZADD', KEYS[3], now + ttl, ARGV[3])
redis.call('ZADD', KEYS[4], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('PEXPIRE', KEYS[4], ttl)
return 0
`;

/**
 * ARGV: outcome ("failed" | "succeeded" | "release"), attemptId, windowMs. Frees the reservation; a
 * failure is recorded for the address and the username, a success clears the username's failures.
 */
export const SETTLE_SCRIPT = `
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
if ARGV[1] == 'failed' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local window = tonumber(ARGV[3])
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('PEXPIRE', KEYS[2], window)
elseif ARGV[1] == 'succeeded' then
  redis.call('DEL', KEYS[2])
end
return 1
`;
