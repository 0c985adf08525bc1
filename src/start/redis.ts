import { Redis, type RedisOptions } from 'ioredis';

// The process's Redis connection from REDIS_URL (docs/deploy.md "Redis"): `redis://` and `rediss://` as ioredis reads
// them, or `unix:///path/to/redis.sock` for a Redis on the same host (no TCP stack per command; the query string, e.g.
// `?db=2&password=…`, is read by ioredis as for its own path form). Every connection duplicated from it (BullMQ's, the
// API's auth connection) inherits the socket.

export function connectRedis(url: string, options: RedisOptions = {}): Redis {
  const socket = redisSocketOf(url);
  return socket === undefined ? new Redis(url, options) : new Redis(socket, options);
}

/** `unix:///path?query` → `/path?query`, the form ioredis takes for a Unix-domain socket; undefined for other URLs. */
export function redisSocketOf(url: string): string | undefined {
  if (!/^unix:/i.test(url)) return undefined;
  const u = new URL(url);
  if (u.host !== '' || u.pathname === '' || u.pathname === '/') {
    throw new Error('REDIS_URL: a Unix socket is written unix:///absolute/path/to/redis.sock');
  }
  return decodeURIComponent(u.pathname) + u.search;
}
