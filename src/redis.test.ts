import { describe, expect, it } from 'vitest';
import { readEnv } from './config/env.js';
import { clusterSeeds, hasHashTag, parseClusterNodes, queuePrefix, redisTargetForHumans, slotTag } from './redis.js';

describe('Redis Cluster settings', () => {
  it('splits REDIS_CLUSTER_NODES on commas, ignoring blanks; empty means no cluster', () => {
    expect(parseClusterNodes(' 10.0.0.1:6379, 10.0.0.2:6380 ,')).toEqual(['10.0.0.1:6379', '10.0.0.2:6380']);
    expect(parseClusterNodes('')).toEqual([]);
    expect(parseClusterNodes(undefined)).toEqual([]);
  });

  it("takes the first seed's credentials and TLS for every node", () => {
    const { nodes, options } = clusterSeeds(['rediss://app:s%40cret@redis-1.example:6380', 'redis-2.example:6380']);
    expect(nodes).toEqual([
      { host: 'redis-1.example', port: 6380 },
      { host: 'redis-2.example', port: 6380 },
    ]);
    expect(options).toEqual({ username: 'app', password: 's@cret', tls: {} });
  });

  it('names the seeds for messages, never the password', () => {
    const where = redisTargetForHumans({
      redisUrl: 'redis://127.0.0.1:6379',
      redisClusterNodes: ['redis://:hunter2secret@10.0.0.1:6379', '10.0.0.2:6379'],
    });
    expect(where).toBe('Redis Cluster (seeds 10.0.0.1:6379, 10.0.0.2:6379)');
    expect(where).not.toContain('hunter2secret');
  });

  it('the environment accepts host:port and redis URLs, and refuses anything else naming the variable', () => {
    expect(readEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:6379,redis://u:p@10.0.0.2:6379' }).REDIS_CLUSTER_NODES).toBe(
      '10.0.0.1:6379,redis://u:p@10.0.0.2:6379',
    );
    expect(readEnv({ REDIS_CLUSTER_NODES: '' }).REDIS_CLUSTER_NODES).toBe('');
    expect(() => readEnv({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES/);
  });
});

describe('hash tags', () => {
  it('a prefix with a non-empty {…} has a hash tag; {} or no braces has none', () => {
    expect(hasHashTag('{relais}')).toBe(true);
    expect(hasHashTag('a{b}c')).toBe(true);
    expect(hasHashTag('relais')).toBe(false);
    expect(hasHashTag('{}relais')).toBe(false);
  });

  it('a tagged prefix keeps every queue in its slot, names unchanged; an untagged one tags each queue', () => {
    expect(queuePrefix('{relais}', 'dispatch')).toBe('{relais}');
    expect(queuePrefix('relais', 'dispatch')).toBe('relais:{dispatch}');
    expect(slotTag('{relais}', 'svc')).toBe('svc');
    expect(slotTag('relais', 'svc')).toBe('{svc}');
  });
});
