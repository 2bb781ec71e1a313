package loadclient

// Redis through go-redis, as the Python RedisStore writes it: one string
// key per entry, each SET with the expiry redis.key_ttl (none when 0), no
// retry of a failed command (a failure is reported, not hidden).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

func init() { RegisterStore(openRedis, "redis", "rediss") }

type redisStore struct {
	client *redis.Client
	ttl    time.Duration
	ctx    context.Context
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func openRedis(cfg StoreConfig) (Store, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("bad Redis URL: %v", err)
	}
	opts.DialTimeout = seconds(cfg.ConnectTimeout)
	opts.ReadTimeout = seconds(cfg.SocketTimeout)
	opts.WriteTimeout = seconds(cfg.SocketTimeout)
	opts.MaxRetries = -1 // as the Python store: no retry
	opts.PoolSize = 1    // one client sends one request at a time
	opts.Protocol = 2
	opts.DisableIdentity = true
	s := &redisStore{client: redis.NewClient(opts), ttl: time.Duration(cfg.KeyTTLS) * time.Second, ctx: context.Background()}
	if err := s.client.Ping(s.ctx).Err(); err != nil {
		s.client.Close()
		return nil, fmt.Errorf("cannot connect to redis at %s: %v", opts.Addr, err)
	}
	return s, nil
}

func (s *redisStore) failed(op string, err error) error {
	return fmt.Errorf("redis %s failed: %v; check that the server is still running (`stratabench services status`)", op, err)
}

func (s *redisStore) Get(key []byte) ([]byte, bool, error) {
	value, err := s.client.Get(s.ctx, string(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.failed("get", err)
	}
	return value, true, nil
}

func (s *redisStore) Put(key, value []byte) error {
	if err := s.client.Set(s.ctx, string(key), value, s.ttl).Err(); err != nil {
		return s.failed("put", err)
	}
	return nil
}

func (s *redisStore) PutMany(keys, values [][]byte) error {
	pipe := s.client.Pipeline()
	for i := range keys {
		pipe.Set(s.ctx, string(keys[i]), values[i], s.ttl)
	}
	if _, err := pipe.Exec(s.ctx); err != nil {
		return s.failed("put_many", err)
	}
	return nil
}

func (s *redisStore) Close() error { return s.client.Close() }
