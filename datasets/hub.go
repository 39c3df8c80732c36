package datasets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hubFiles names a dataset's parquet files in a Hugging Face Hub dataset repository: the shards
// Dir/Split-0000K-of-0000N.parquet at Revision.
type hubFiles struct {
	Repo     string
	Revision string
	Dir      string
	Split    string
}

// HubSource says where on the Hub a dataset's parquet shards are.
type HubSource struct {
	Repo     string // e.g. "google-research-datasets/nq_open"
	Revision string // branch, tag or commit; "" = "main"
	Dir      string // folder in the repository, e.g. "nq_open"
	Split    string // shard prefix, e.g. "validation"
}

// HubSourceOf returns the Hub location of a known dataset name, or false when the dataset has none
// (2WikiMultihopQA has no official Hub copy in this layout; nq_longdoc is built locally).
func HubSourceOf(name string) (HubSource, string, bool) {
	k, ok := lookupName(name)
	if !ok || k.Hub == nil {
		return HubSource{}, "", false
	}
	return HubSource{Repo: k.Hub.Repo, Revision: k.Hub.Revision, Dir: k.Hub.Dir, Split: k.Hub.Split}, k.Dir, true
}

// Fetcher downloads parquet files from the Hugging Face Hub (or a mirror with the same URL layout) into
// a local directory: it lists the shards with the Hub's tree API, downloads each through its resolve URL
// ({endpoint}/datasets/{repo}/resolve/{revision}/{path}), resumes partial files with Range requests, checks
// the size and the SHA-256 the Hub reports for LFS files, and renames each file into place only when it
// is complete.
type Fetcher struct {
	// Endpoint is the Hub's base URL; NewFetcher takes $HF_ENDPOINT, else https://huggingface.co.
	Endpoint string
	// Token is sent as "Authorization: Bearer" to the endpoint; NewFetcher takes $HF_TOKEN. It is never
	// written to logs or errors.
	Token string
	// Client does the requests (http.DefaultClient's redirect policy drops Authorization on a redirect
	// to another host, such as the Hub's CDN).
	Client *http.Client
	// Progress, when set, receives progress lines.
	Progress io.Writer
	// Retries is how often one file's download is resumed after a broken transfer (default 3).
	Retries int
}

// NewFetcher returns a Fetcher configured from HF_ENDPOINT and HF_TOKEN.
func NewFetcher(progress io.Writer) *Fetcher {
	ep := os.Getenv("HF_ENDPOINT")
	if ep == "" {
		ep = "https://huggingface.co"
	}
	f := &Fetcher{Endpoint: strings.TrimRight(ep, "/"), Token: os.Getenv("HF_TOKEN"), Progress: progress, Retries: 3}
	f.Client = &http.Client{CheckRedirect: f.checkRedirect}
	return f
}

// checkRedirect keeps the token on the endpoint's own host:port only (the Hub redirects LFS files to a
// CDN, which must not see it).
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	ep, err := url.Parse(f.Endpoint)
	if err != nil || !strings.EqualFold(ep.Host, req.URL.Host) || ep.Scheme != req.URL.Scheme {
		req.Header.Del("Authorization")
	}
	return nil
}

// hubEntry is one element of the Hub's tree listing.
type hubEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	Oid  string `json:"oid"`
	LFS  *struct {
		Oid  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// FetchResult reports one downloaded (or already cached) file.
type FetchResult struct {
	Path   string // local path
	Size   int64
	SHA256 string // hex, when the Hub gave one to check against ("" otherwise)
	Cached bool   // already complete; nothing downloaded
}

func (f *Fetcher) revision(src HubSource) string {
	if src.Revision == "" {
		return "main"
	}
	return src.Revision
}

func (f *Fetcher) get(ctx context.Context, u string, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if f.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.Token)
	}
	req.Header.Set("User-Agent", "ragbench")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := f.Client
	if c == nil {
		c = http.DefaultClient
	}
	return c.Do(req)
}

// statusErr describes a failed response without echoing anything sent.
func statusErr(what string, resp *http.Response) error {
	msg := resp.Status
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (set HF_TOKEN for gated or private datasets)"
	case http.StatusNotFound:
		msg += " (check the repository, revision and path)"
	}
	return fmt.Errorf("%s: %s", what, msg)
}

// List returns the parquet shards of src on the Hub, sorted, with their sizes and checksums.
func (f *Fetcher) List(ctx context.Context, src HubSource) ([]hubEntry, error) {
	u := fmt.Sprintf("%s/api/datasets/%s/tree/%s/%s", f.Endpoint, src.Repo, url.PathEscape(f.revision(src)), escapePath(src.Dir))
	resp, err := f.get(ctx, u, nil)
	if err != nil {
		return nil, fmt.Errorf("list %s/%s: %w", src.Repo, src.Dir, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusErr(fmt.Sprintf("list %s/%s", src.Repo, src.Dir), resp)
	}
	var all []hubEntry
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&all); err != nil {
		return nil, fmt.Errorf("list %s/%s: bad listing: %w", src.Repo, src.Dir, err)
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(src.Split) + `-\d{5}-of-\d{5}\.parquet$`)
	var out []hubEntry
	for _, e := range all {
		if e.Type == "file" && re.MatchString(path.Base(e.Path)) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("list %s/%s: no %s-*.parquet shards at revision %s", src.Repo, src.Dir, src.Split, f.revision(src))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// Fetch downloads the shards of src into dest (a directory), skipping files already complete there.
func (f *Fetcher) Fetch(ctx context.Context, src HubSource, dest string) ([]FetchResult, error) {
	entries, err := f.List(ctx, src)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	var out []FetchResult
	for _, e := range entries {
		size, sum := e.Size, ""
		if e.LFS != nil {
			size = e.LFS.Size
			if isSHA256(e.LFS.Oid) {
				sum = strings.ToLower(e.LFS.Oid)
			}
		}
		r, err := f.FetchFile(ctx, src, e.Path, filepath.Join(dest, path.Base(e.Path)), size, sum)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// FetchFile downloads one repository file to local. size (< 0 = unknown) and sum (hex SHA-256, "" =
// unknown) are checked when given; a sum that looks like a SHA-256 in the response's ETag is checked too.
// A partial download is kept in local+".part" and resumed with a Range request.
func (f *Fetcher) FetchFile(ctx context.Context, src HubSource, repoPath, local string, size int64, sum string) (FetchResult, error) {
	res := FetchResult{Path: local, Size: size, SHA256: sum}
	name := src.Repo + "/" + repoPath
	if st, err := os.Stat(local); err == nil && (size < 0 || st.Size() == size) {
		if sum == "" || fileSHA256(local) == sum {
			res.Cached, res.Size = true, st.Size()
			f.progressf("%s: cached at %s\n", name, local)
			return res, nil
		}
	}
	u := fmt.Sprintf("%s/datasets/%s/resolve/%s/%s", f.Endpoint, src.Repo, url.PathEscape(f.revision(src)), escapePath(repoPath))
	part := local + ".part"
	retries := f.Retries
	if retries <= 0 {
		retries = 3
	}
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		done, etagSum, err := f.download(ctx, u, name, part, size)
		if err == nil && done {
			if sum == "" && etagSum != "" {
				sum = etagSum
			}
			if err := verify(part, size, sum); err != nil {
				os.Remove(part)
				return res, fmt.Errorf("fetch %s: %w; the partial file was removed, run fetch again", name, err)
			}
			if err := os.Rename(part, local); err != nil {
				return res, fmt.Errorf("fetch %s: %w", name, err)
			}
			st, _ := os.Stat(local)
			res.Size, res.SHA256 = st.Size(), sum
			f.progressf("%s: done (%d bytes) -> %s\n", name, st.Size(), local)
			return res, nil
		}
		var perm permanentErr
		if errors.As(err, &perm) {
			return res, err
		}
		lastErr = err
		f.progressf("%s: transfer broken (%v); resuming\n", name, err)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
	return res, fmt.Errorf("fetch %s: gave up after %d attempts: %w (the partial file %s is kept; run fetch again to resume)", name, retries+1, lastErr, part)
}

// permanentErr marks errors that retrying will not fix.
type permanentErr struct{ error }

// Unwrap returns the underlying error.
func (p permanentErr) Unwrap() error { return p.error }

// download appends the rest of the file to part. It reports done when the body was read to its end.
func (f *Fetcher) download(ctx context.Context, u, name, part string, size int64) (bool, string, error) {
	var have int64
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	if size >= 0 && have > size {
		os.Remove(part)
		have = 0
	}
	hdr := map[string]string{}
	if have > 0 {
		hdr["Range"] = fmt.Sprintf("bytes=%d-", have)
	}
	resp, err := f.get(ctx, u, hdr)
	if err != nil {
		return false, "", fmt.Errorf("fetch %s: %w", name, err)
	}
	defer resp.Body.Close()
	etag := strings.Trim(strings.TrimPrefix(resp.Header.Get("ETag"), "W/"), `"`)
	if e := resp.Header.Get("X-Linked-Etag"); e != "" {
		etag = strings.Trim(strings.TrimPrefix(e, "W/"), `"`)
	}
	etagSum := ""
	if isSHA256(etag) {
		etagSum = strings.ToLower(etag)
	}
	flags := os.O_CREATE | os.O_WRONLY
	total := size
	switch resp.StatusCode {
	case http.StatusOK:
		flags |= os.O_TRUNC
		have = 0
		if resp.ContentLength >= 0 {
			if total >= 0 && resp.ContentLength != total {
				return false, "", permanentErr{fmt.Errorf("fetch %s: the server sends %d bytes, the listing says %d", name, resp.ContentLength, total)}
			}
			total = resp.ContentLength
		}
	case http.StatusPartialContent:
		flags |= os.O_APPEND
		start, end, full, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return false, "", permanentErr{fmt.Errorf("fetch %s: bad Content-Range %q for a resume at byte %d", name, resp.Header.Get("Content-Range"), have)}
		}
		_ = end
		if full >= 0 {
			total = full
		}
	case http.StatusRequestedRangeNotSatisfiable:
		// The partial file is already complete or does not match: start again.
		os.Remove(part)
		return false, "", fmt.Errorf("range not satisfiable; restarting")
	default:
		return false, "", permanentErr{statusErr("fetch "+name, resp)}
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, "", permanentErr{err}
	}
	pw := &progressWriter{w: out, f: f, name: name, done: have, total: total}
	_, copyErr := io.Copy(pw, resp.Body)
	if err := out.Sync(); copyErr == nil && err != nil {
		copyErr = err
	}
	if err := out.Close(); copyErr == nil && err != nil {
		copyErr = err
	}
	if copyErr != nil {
		return false, "", copyErr
	}
	if total >= 0 && pw.done < total {
		return false, "", io.ErrUnexpectedEOF
	}
	return true, etagSum, nil
}

func parseContentRange(s string) (start, end, total int64, ok bool) {
	// bytes START-END/TOTAL
	s = strings.TrimSpace(strings.TrimPrefix(s, "bytes "))
	slash := strings.IndexByte(s, '/')
	dash := strings.IndexByte(s, '-')
	if slash < 0 || dash < 0 || dash > slash {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(s[:dash], 10, 64)
	end, err2 = strconv.ParseInt(s[dash+1:slash], 10, 64)
	total = -1
	if t := s[slash+1:]; t != "*" {
		total, err3 = strconv.ParseInt(t, 10, 64)
	}
	return start, end, total, err1 == nil && err2 == nil && err3 == nil
}

func verify(p string, size int64, sum string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if size >= 0 && st.Size() != size {
		return fmt.Errorf("size %d, want %d", st.Size(), size)
	}
	if sum != "" {
		if got := fileSHA256(p); got != sum {
			return fmt.Errorf("SHA-256 %s, want %s", got, sum)
		}
	}
	return nil
}

func fileSHA256(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (f *Fetcher) progressf(format string, args ...any) {
	if f.Progress != nil {
		fmt.Fprintf(f.Progress, format, args...)
	}
}

// progressWriter counts bytes and prints a progress line at most every half second.
type progressWriter struct {
	w     io.Writer
	f     *Fetcher
	name  string
	done  int64
	total int64
	last  time.Time
}

// Write writes b and reports progress.
func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.f.Progress != nil && time.Since(p.last) > 500*time.Millisecond {
		p.last = time.Now()
		if p.total > 0 {
			p.f.progressf("%s: %d/%d bytes (%.0f%%)\n", p.name, p.done, p.total, 100*float64(p.done)/float64(p.total))
		} else {
			p.f.progressf("%s: %d bytes\n", p.name, p.done)
		}
	}
	return n, err
}

// FetchName downloads a known dataset into the cache (CacheDir()/data/<its directory>) and returns
// that directory, which Load then finds by name.
func FetchName(ctx context.Context, f *Fetcher, name string) (string, []FetchResult, error) {
	src, dir, ok := HubSourceOf(name)
	if !ok {
		if _, known := lookupName(name); known {
			return "", nil, fmt.Errorf("fetch %s: no Hugging Face Hub source is known for this dataset; give --repo/--dir/--split, or build it with 'ragbench datasets import'", name)
		}
		return "", nil, fmt.Errorf("fetch %s: unknown dataset (known: %s)", name, strings.Join(Names(), ", "))
	}
	cache, err := CacheDir()
	if err != nil {
		return "", nil, err
	}
	dest := filepath.Join(cache, "data", filepath.FromSlash(dir))
	res, err := f.Fetch(ctx, src, dest)
	return dest, res, err
}

// LocalDirOf returns the directory of a known dataset below a data directory (for example
// "hotpotqa/fullwiki"), with its canonical name.
func LocalDirOf(name string) (canonical, dir string, ok bool) {
	k, ok := lookupName(name)
	return k.Name, k.Dir, ok
}
