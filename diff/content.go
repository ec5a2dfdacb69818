package diff

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
)

// ErrRemoteSource marks file contents that would have to be fetched over the network.
var ErrRemoteSource = errors.New("contents come from a remote source")

// SourceScheme returns the URL scheme of a file's contents ("data" when inline, "" when none).
func SourceScheme(f types.File) string {
	if f.Contents.Source == nil || *f.Contents.Source == "" {
		return ""
	}
	u, err := url.Parse(*f.Contents.Source)
	if err != nil {
		return "invalid"
	}
	return strings.ToLower(u.Scheme)
}

// FileContents decodes a file's inline contents (a data URL, optionally gzip-compressed). A file with no
// source is empty. Remote sources are not fetched: they return ErrRemoteSource.
func FileContents(f types.File) ([]byte, error) {
	switch SourceScheme(f) {
	case "":
		return []byte{}, nil
	case "data":
	default:
		return nil, ErrRemoteSource
	}
	du, err := dataurl.DecodeString(*f.Contents.Source)
	if err != nil {
		return nil, fmt.Errorf("contents.source: bad data URL: %w", err)
	}
	comp := ""
	if f.Contents.Compression != nil {
		comp = *f.Contents.Compression
	}
	switch comp {
	case "":
		return du.Data, nil
	case "gzip":
		out, err := gunzip(du.Data)
		if err != nil {
			return nil, fmt.Errorf("contents: gzip: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("contents.compression: unsupported %q", comp)
	}
}

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

// contentsEqual compares two files' decoded contents, decoding only when the sources differ.
func contentsEqual(a, b types.File) (bool, error) {
	if sameSource(a, b) {
		return true, nil
	}
	if SourceScheme(a) != "data" && SourceScheme(a) != "" || SourceScheme(b) != "data" && SourceScheme(b) != "" {
		return false, nil // a remote source changed: treated as a change, refused by the planner
	}
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
