package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Deadlines of the S3 calls.
const (
	// s3OpTimeout bounds one call (put, stat, delete, the bucket check),
	// retries included.
	s3OpTimeout = 30 * time.Second
	// s3ReadTimeout bounds the life of an object returned by Open, so a
	// slow client cannot hold the S3 connection open for longer.
	s3ReadTimeout = 10 * time.Minute
	// s3SweepTimeout bounds one Sweep: listing the prefix and deleting.
	s3SweepTimeout = 15 * time.Minute
)

// S3Options configures an S3Store.
type S3Options struct {
	Endpoint  string        // host[:port] of the S3-compatible service, no scheme
	Bucket    string        // must exist
	Prefix    string        // prepended to every id to make the object key, e.g. "media/"
	AccessKey string        // empty with SecretKey for anonymous access
	SecretKey string        // secret of AccessKey
	Region    string        // empty lets the client ask the service
	UseSSL    bool          // https instead of http
	TTL       time.Duration // 0 means DefaultTTL
	// SignedTTL is the life of audio and video objects; 0 means
	// DefaultSignedTTL.
	SignedTTL time.Duration
	// TeamQuota bounds the bytes of unexpired objects one team may have
	// stored; 0 = no quota.
	TeamQuota int64
}

// S3Store keeps expiring media as objects under a key prefix of an
// S3-compatible bucket, with the ids, content types and expiry of Store. It
// is safe for concurrent use, also by several processes sharing the bucket.
type S3Store struct {
	client *minio.Client
	bucket string
	prefix string
	ttl    ttls
	log    *slog.Logger
	now    func() time.Time

	opTimeout    time.Duration // see s3OpTimeout
	readTimeout  time.Duration // see s3ReadTimeout
	sweepTimeout time.Duration // see s3SweepTimeout

	quota quota
}

// NewS3Store connects to the service and checks, within ctx and a 30 s
// deadline, that the bucket exists.
func NewS3Store(ctx context.Context, opts S3Options, log *slog.Logger) (*S3Store, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("media: s3: no endpoint")
	}
	if strings.Contains(opts.Endpoint, "://") || strings.Contains(opts.Endpoint, "/") {
		return nil, fmt.Errorf("media: s3: endpoint %q must be host[:port] without scheme or path", opts.Endpoint)
	}
	if opts.Bucket == "" {
		return nil, errors.New("media: s3: no bucket")
	}
	client, err := minio.New(opts.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, ""),
		Secure: opts.UseSSL,
		Region: opts.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("media: s3: %w", err)
	}
	s := &S3Store{
		client: client, bucket: opts.Bucket, prefix: opts.Prefix, ttl: newTTLs(opts.TTL, opts.SignedTTL), log: log, now: time.Now,
		opTimeout: s3OpTimeout, readTimeout: s3ReadTimeout, sweepTimeout: s3SweepTimeout,
	}
	s.quota = quota{limit: opts.TeamQuota, now: func() time.Time { return s.now() }, teams: make(map[string]*teamUsage)}
	cctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	defer cancel()
	ok, err := client.BucketExists(cctx, s.bucket)
	if err != nil {
		return nil, fmt.Errorf("media: s3: check bucket %s: %w", s.bucket, err)
	}
	if !ok {
		return nil, fmt.Errorf("media: s3: bucket %s does not exist", s.bucket)
	}
	return s, nil
}

// TTL returns how long an object is served after Put (audio and video:
// SignedTTL).
func (s *S3Store) TTL() time.Duration { return s.ttl.plain }

// SignedTTL returns how long an audio or video object is served after
// PutFile.
func (s *S3Store) SignedTTL() time.Duration { return s.ttl.signed }

// key is the object key of id.
func (s *S3Store) key(id string) string { return s.prefix + id }

// Put stores data of team teamID (empty: no team, no quota) and returns
// its id, such as "9a1c...-3f9c...e1.png"; the extension follows
// contentType (png, jpg, webp, pdf, else bin) and so does the object's
// stored content type. It fails with ErrQuotaExceeded when the team's
// unexpired objects and data together would exceed the team quota.
func (s *S3Store) Put(ctx context.Context, teamID string, data []byte, contentType string) (id string, err error) {
	tag := teamTag(teamID)
	done, err := s.quota.reserve(ctx, tag, int64(len(data)), s.teamBytes)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer func() { done(err == nil) }()
	id, err = newID(tag, contentType)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	defer cancel()
	_, err = s.client.PutObject(ctx, s.bucket, s.key(id), bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: contentTypeOf(id)})
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	return id, nil
}

// PutFile stores the file at path (an MP3 or MP4 made by a conversion) for
// team teamID like Put, streaming it to the bucket; the caller removes
// path. The upload is bounded by the read deadline (10 minutes), not the
// per-call one, since media may be large.
func (s *S3Store) PutFile(ctx context.Context, teamID, path, contentType string) (id string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	tag := teamTag(teamID)
	done, err := s.quota.reserve(ctx, tag, fi.Size(), s.teamBytes)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer func() { done(err == nil) }()
	id, err = newID(tag, contentType)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.readTimeout)
	defer cancel()
	_, err = s.client.PutObject(ctx, s.bucket, s.key(id), f, fi.Size(), minio.PutObjectOptions{ContentType: contentTypeOf(id)})
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	return id, nil
}

// Open returns the object of id with its content type and last-modified
// time, for http.ServeContent. Unknown, malformed and expired ids give
// ErrNotFound; an expired object is deleted. Looking the object up is
// bounded by 30 s, and reading it must end within 10 minutes; Close releases
// the connection.
func (s *S3Store) Open(id string) (io.ReadSeekCloser, string, time.Time, error) {
	if !idPattern.MatchString(id) {
		return nil, "", time.Time{}, ErrNotFound
	}
	// The object's reads use ctx until Close, so it gets the long deadline;
	// the lookup below is held to the short one by a watchdog.
	ctx, cancel := context.WithTimeout(context.Background(), s.readTimeout)
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(id), minio.GetObjectOptions{})
	if err != nil {
		cancel()
		return nil, "", time.Time{}, fmt.Errorf("media: open: %w", err)
	}
	watchdog := time.AfterFunc(s.opTimeout, cancel)
	info, err := obj.Stat()
	if !watchdog.Stop() {
		if err == nil { // in time, but the reads would fail now
			err = ctx.Err()
		}
		err = fmt.Errorf("lookup exceeded %s: %w", s.opTimeout, err)
	}
	if err != nil {
		obj.Close()
		cancel()
		if isNotFound(err) {
			return nil, "", time.Time{}, ErrNotFound
		}
		return nil, "", time.Time{}, fmt.Errorf("media: open: %w", err)
	}
	if s.expired(id, info.LastModified) {
		obj.Close()
		cancel()
		if err := s.remove(context.Background(), s.key(id)); err != nil {
			s.log.WarnContext(context.Background(), "media expired object not deleted", "id", id, "err", err)
		}
		return nil, "", time.Time{}, ErrNotFound
	}
	ctype := info.ContentType
	if ctype == "" {
		ctype = contentTypeOf(id)
	}
	return &s3Object{Object: obj, cancel: cancel}, ctype, info.LastModified, nil
}

// s3Object is an object being read; Close also ends its context.
type s3Object struct {
	*minio.Object
	cancel context.CancelFunc
}

// Close closes the object and releases its context.
func (o *s3Object) Close() error {
	err := o.Object.Close()
	o.cancel()
	return err
}

// isNotFound reports whether err says the object does not exist.
func isNotFound(err error) bool {
	resp := minio.ToErrorResponse(err)
	return resp.StatusCode == http.StatusNotFound || resp.Code == minio.NoSuchKey
}

func (s *S3Store) expired(id string, mod time.Time) bool { return s.now().Sub(mod) >= s.ttl.of(id) }

// Sweep deletes the expired objects under the prefix (those whose key is the
// prefix and an id; other keys are left alone) and returns how many it
// deleted. The whole sweep is bounded by 15 minutes, each delete by 30 s.
func (s *S3Store) Sweep(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.sweepTimeout)
	defer cancel()
	n := 0
	var errs []error
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
		if obj.Err != nil {
			errs = append(errs, obj.Err)
			break
		}
		id, ok := strings.CutPrefix(obj.Key, s.prefix)
		if !ok || !idPattern.MatchString(id) || !s.expired(id, obj.LastModified) {
			continue
		}
		if err := s.remove(ctx, obj.Key); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		n++
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("media: sweep: %w", err)
	}
	return n, nil
}

// teamBytes measures the unexpired objects of the team tagged tag, listing
// only its keys, within the per-call deadline.
func (s *S3Store) teamBytes(ctx context.Context, tag string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	defer cancel()
	var n int64
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + tag + "-", Recursive: true}) {
		if obj.Err != nil {
			return 0, fmt.Errorf("media: measure team usage: %w", obj.Err)
		}
		id, ok := strings.CutPrefix(obj.Key, s.prefix)
		if !ok || !idPattern.MatchString(id) || s.expired(id, obj.LastModified) {
			continue
		}
		n += obj.Size
	}
	return n, nil
}

// remove deletes one object within the per-call deadline.
func (s *S3Store) remove(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	defer cancel()
	return s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
}

// RunJanitor sweeps now and then every interval (0 means one hour) until
// ctx ends. Run it in its own goroutine.
func (s *S3Store) RunJanitor(ctx context.Context, every time.Duration) {
	runJanitor(ctx, every, s.log, s.Sweep)
}
