-- bench/post-auth.lua, each connection waiting DELAY_MS before each request: the rate of a
-- closed loop through a processor that takes DELAY_MS, with the wait at the client instead.
-- wrk's latencies leave the wait out. Needs what post-auth.lua needs, and DELAY_MS.
dofile("bench/post-auth.lua")

local wait = tonumber(os.getenv("DELAY_MS"))

function delay()
  return wait
end
