package diff

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"reflect"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// ErrRemoteSource marks file contents that would have to be fetched over the network.
var ErrRemoteSource = errors.New("contents come from a remote source")

// ErrUnread marks the contents of a baseline entry for a file that exists on the node but was not
// read (too large to compare, or unreadable): UnreadSource. The file is there, so a desired entry
// for its path is a modification, never an addition, and whatever judges the old contents (the
// registries.conf drain rule) gets this error: the change is judged as one whose current side is
// unknown.
var ErrUnread = errors.New("the node's file was not read")

// unreadScheme is the source scheme of UnreadSource: no payload's (Ignition accepts only data,
// http(s), tftp, s3, gs, arn and none), never fetched.
const unreadScheme = "refresh-agent-unread"

// UnreadSource is the contents source of a baseline entry for a node file that exists but was not
// read, why saying why ("5000251 bytes, more than the 4194304 the baseline reads"). The diff counts
// such contents as changed (as a remote source: never equal to the desired ones); FileContents and
// every reader of them return ErrUnread with why.
func UnreadSource(why string) string { return unreadScheme + ":" + url.PathEscape(why) }

// unreadError is the error FileContents gives for an UnreadSource.
func unreadError(source *string) error {
	why, _ := url.PathUnescape(strings.TrimPrefix(*source, unreadScheme+":"))
	return fmt.Errorf("%w (%s)", ErrUnread, why)
}

// SourceScheme returns the URL scheme of a file's contents ("data" when inline, "" when none).
func SourceScheme(f types.File) string { return sourceScheme(f.Contents.Source) }

func sourceScheme(source *string) string {
	if source == nil || *source == "" {
		return ""
	}
	u, err := url.Parse(*source)
	if err != nil {
		return "invalid"
	}
	return strings.ToLower(u.Scheme)
}

// FileContents decodes a file's inline contents (a data URL, optionally gzip-compressed) and checks
// them against contents.verification.hash, as Ignition does (the hash is of the decompressed
// contents). A file with no source is empty. Remote sources are not fetched: they return
// ErrRemoteSource. The decompressed size is bounded by MaxPayloadSize before anything is allocated.
func FileContents(f types.File) ([]byte, error) {
	var data []byte
	switch SourceScheme(f) {
	case "":
		data = []byte{}
	case "data":
		var err error
		if data, err = resourceData(f.Contents, MaxPayloadSize); err != nil {
			return nil, err
		}
	case unreadScheme:
		return nil, unreadError(f.Contents.Source)
	default:
		return nil, ErrRemoteSource
	}
	if err := verify(f.Contents.Verification, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return nil, err
	}
	return data, nil
}

// CheckFileContents checks what FileContents would (the data URL, the gzip stream within
// MaxPayloadSize, the verification hash) without keeping the contents: a compressed stream is
// decompressed into the hash or discarded, never allocated.
func CheckFileContents(f types.File) error {
	if SourceScheme(f) != "data" {
		_, err := FileContents(f)
		return err
	}
	raw, comp, err := dataAndCompression(f.Contents)
	if err != nil {
		return err
	}
	return verify(f.Contents.Verification, func(w io.Writer) error {
		if comp == "" {
			_, err := w.Write(raw)
			return err
		}
		_, err := gunzipSize(raw, MaxPayloadSize, w)
		if errors.Is(err, errTooLarge) {
			return fmt.Errorf("contents: decompressed size exceeds the %d byte limit", MaxPayloadSize)
		}
		if err != nil {
			return fmt.Errorf("contents: gzip: %w", err)
		}
		return nil
	})
}

// ContentSize is the size of the file FileContents would write, without keeping the decompressed
// contents (a gzip stream is counted into io.Discard): what the transaction's space check charges
// for it. The verification hash is not checked here (FileContents checks it when the file is
// staged, and the plan checked compressed contents already).
func ContentSize(f types.File) (int64, error) {
	if SourceScheme(f) != "data" {
		data, err := FileContents(f)
		return int64(len(data)), err
	}
	raw, comp, err := dataAndCompression(f.Contents)
	if err != nil {
		return 0, err
	}
	if comp == "" {
		return int64(len(raw)), nil
	}
	n, err := gunzipSize(raw, MaxPayloadSize, io.Discard)
	if errors.Is(err, errTooLarge) {
		return 0, fmt.Errorf("contents: decompressed size exceeds the %d byte limit", MaxPayloadSize)
	}
	if err != nil {
		return 0, fmt.Errorf("contents: gzip: %w", err)
	}
	return n, nil
}

// resourceData decodes an inline resource's data URL and decompresses it, in at most limit bytes.
func resourceData(r types.Resource, limit int64) ([]byte, error) {
	raw, comp, err := dataAndCompression(r)
	if err != nil {
		return nil, err
	}
	if comp == "" {
		if int64(len(raw)) > limit {
			return nil, fmt.Errorf("contents: %d bytes exceed the %d byte limit", len(raw), limit)
		}
		return raw, nil
	}
	n, err := gunzipSize(raw, limit, io.Discard)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("contents: decompressed size exceeds the %d byte limit", limit)
	}
	if err != nil {
		return nil, fmt.Errorf("contents: gzip: %w", err)
	}
	out, err := gunzipN(raw, n)
	if err != nil {
		return nil, fmt.Errorf("contents: gzip: %w", err)
	}
	return out, nil
}

// dataAndCompression returns an inline resource's data URL payload (still compressed) and its
// compression ("" or "gzip").
func dataAndCompression(r types.Resource) ([]byte, string, error) {
	comp := ""
	if r.Compression != nil {
		comp = *r.Compression
	}
	if comp != "" && comp != "gzip" {
		return nil, "", fmt.Errorf("contents.compression: unsupported %q", comp)
	}
	if r.Source == nil {
		return []byte{}, comp, nil
	}
	data, err := decodeDataURL(*r.Source)
	if err != nil {
		return nil, "", fmt.Errorf("contents.source: %w", err)
	}
	return data, comp, nil
}

// verify checks contents written by write against v's hash (nothing to check without one). The
// hash functions are the ones Ignition's validation accepts: sha256 and sha512.
func verify(v types.Verification, write func(io.Writer) error) error {
	if v.Hash == nil {
		return write(io.Discard)
	}
	function, sum, err := v.HashParts()
	if err != nil {
		return fmt.Errorf("contents.verification.hash: %w", err)
	}
	want, err := hex.DecodeString(sum)
	if err != nil {
		return fmt.Errorf("contents.verification.hash: %w", err)
	}
	var h hash.Hash
	switch function {
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return fmt.Errorf("contents.verification.hash: unsupported function %q", function)
	}
	if err := write(h); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return ErrHashMismatch
	}
	return nil
}

// checkContents charges every inline file's decoded contents to the decode's budget and checks every
// verification hash (of files and of their append entries), so that a payload whose contents are too
// large, or do not match their hash, is invalid before anything is planned or written.
func (d *decoder) checkContents(cfg types.Config) error {
	for i, f := range cfg.Storage.Files {
		if k, ok := d.known[f.Path]; ok && d.shared && reflect.DeepEqual(k, f.Contents) {
			continue // the outer decode's contents, charged and checked by it
		}
		if err := d.checkResource(f.Contents); err != nil {
			return fmt.Errorf("storage.files.%d (%s): contents: %w", i, f.Path, err)
		}
		for j, a := range f.Append {
			if err := d.checkResource(a); err != nil {
				return fmt.Errorf("storage.files.%d (%s): append.%d: %w", i, f.Path, j, err)
			}
		}
	}
	return nil
}

func (d *decoder) checkResource(r types.Resource) error {
	// Validation has parsed every URL already; url.Parse again would scan each data URL whole.
	if r.Source == nil || len(*r.Source) < 5 || !strings.EqualFold((*r.Source)[:5], "data:") {
		return nil // nothing inline to count or check; the planner refuses remote sources
	}
	if (r.Compression == nil || *r.Compression == "") && r.Verification.Hash == nil {
		// Decoded data is never longer than its data URL: charge that, without decoding.
		return d.charge(int64(len(*r.Source)), "decoded size")
	}
	raw, comp, err := dataAndCompression(r)
	if err != nil {
		return err
	}
	if comp == "" {
		if err := d.charge(int64(len(raw)), "decoded size"); err != nil {
			return err
		}
		return verify(r.Verification, func(w io.Writer) error { _, err := w.Write(raw); return err })
	}
	// Compressed: one streaming pass counts the decompressed size (within the budget) and hashes it.
	return verify(r.Verification, func(w io.Writer) error {
		n, err := gunzipSize(raw, d.budget, w)
		if errors.Is(err, errTooLarge) {
			return d.charge(d.budget+1, "decompressed size")
		}
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		return d.charge(n, "decompressed size")
	})
}

// ErrHashMismatch: a resource's contents do not match its verification hash. Ignition fails such a
// file; the payload is invalid.
var ErrHashMismatch = errors.New("contents do not match contents.verification.hash")

// sameSource reports whether two files' contents are equal without decoding them, when it can tell:
// identical source and compression strings always decode to identical bytes.
func sameSource(a, b types.File) bool {
	return ptrEq(a.Contents.Source, b.Contents.Source) && ptrEq(a.Contents.Compression, b.Contents.Compression)
}

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// contentsEqual compares two files' decoded contents, decoding only when the sources differ, and then
// as two streams: neither side is held in memory whole.
func contentsEqual(a, b types.File) (bool, error) {
	if sameSource(a, b) {
		return true, nil
	}
	if SourceScheme(a) != "data" && SourceScheme(a) != "" || SourceScheme(b) != "data" && SourceScheme(b) != "" {
		return false, nil // a remote source changed: treated as a change, refused by the planner
	}
	if !compressed(a) && !compressed(b) {
		// Both decode to their data URL's bytes, already small next to the payload: compare them.
		ca, err := FileContents(a)
		if err != nil {
			return false, fmt.Errorf("%s: current %w", a.Path, err)
		}
		cb, err := FileContents(b)
		if err != nil {
			return false, fmt.Errorf("%s: desired %w", b.Path, err)
		}
		return bytes.Equal(ca, cb), nil
	}
	ra, err := contentsReader(a)
	if err != nil {
		return false, fmt.Errorf("%s: current %w", a.Path, err)
	}
	rb, err := contentsReader(b)
	if err != nil {
		return false, fmt.Errorf("%s: desired %w", b.Path, err)
	}
	same, err := readersEqual(ra, rb)
	if err != nil {
		return false, fmt.Errorf("%s: %w", b.Path, err)
	}
	return same, nil
}

func compressed(f types.File) bool {
	return f.Contents.Compression != nil && *f.Contents.Compression != ""
}

// contentsReader streams an inline file's decompressed contents (no source: empty), at most
// MaxPayloadSize bytes of them.
func contentsReader(f types.File) (io.Reader, error) {
	if SourceScheme(f) == "" {
		return bytes.NewReader(nil), nil
	}
	raw, comp, err := dataAndCompression(f.Contents)
	if err != nil {
		return nil, err
	}
	if comp == "" {
		return bytes.NewReader(raw), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("contents: gzip: %w", err)
	}
	return &limitedReader{r: zr, n: MaxPayloadSize}, nil
}

// limitedReader fails, rather than stops, past n bytes.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.n -= int64(n); l.n < 0 {
		return n, fmt.Errorf("contents: decompressed size exceeds the %d byte limit", MaxPayloadSize)
	}
	return n, err
}

// readersEqual compares two streams chunk by chunk.
func readersEqual(a, b io.Reader) (bool, error) {
	bufA, bufB := make([]byte, 8<<10), make([]byte, 8<<10)
	for {
		na, errA := io.ReadFull(a, bufA)
		nb, errB := io.ReadFull(b, bufB)
		for _, err := range []error{errA, errB} {
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return false, err
			}
		}
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA != nil || errB != nil { // one ended: equal only if both did
			return errA != nil && errB != nil, nil
		}
	}
}

// FileContentsUpTo is FileContents for a reader that needs only small files: it fails, before
// allocating them, on contents larger than limit bytes once decompressed.
func FileContentsUpTo(f types.File, limit int64) ([]byte, error) {
	if SourceScheme(f) != "data" {
		return FileContents(f)
	}
	data, err := resourceData(f.Contents, limit)
	if err != nil {
		return nil, err
	}
	if err := verify(f.Contents.Verification, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return nil, err
	}
	return data, nil
}
