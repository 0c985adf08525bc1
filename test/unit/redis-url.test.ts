import { describe, expect, it } from 'vitest';
import { redisSocketOf } from '../../src/start/redis.js';

// REDIS_URL's Unix-socket form (src/start/redis.ts, docs/deploy.md "Redis"): what ioredis is given.
describe('REDIS_URL', () => {
  it('unix:///path is the socket path ioredis takes, its query string kept for ioredis to read', () => {
    expect(redisSocketOf('unix:///run/redis/redis.sock')).toBe('/run/redis/redis.sock');
    expect(redisSocketOf('UNIX:///run/redis/redis.sock?db=2')).toBe('/run/redis/redis.sock?db=2');
    expect(redisSocketOf('unix:///tmp/a%20b/redis.sock')).toBe('/tmp/a b/redis.sock');
  });

  it('redis:// and rediss:// stay TCP, as before', () => {
    expect(redisSocketOf('redis://127.0.0.1:6379')).toBeUndefined();
    expect(redisSocketOf('rediss://user:pw@redis.example:6380/1')).toBeUndefined();
  });

  it('refuses a socket URL with a host or without a path', () => {
    expect(() => redisSocketOf('unix://localhost/run/redis.sock')).toThrow(/unix:\/\/\/absolute/);
    expect(() => redisSocketOf('unix:///')).toThrow(/unix:\/\/\/absolute/);
  });
});
