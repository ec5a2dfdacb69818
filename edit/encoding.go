package edit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/openshift/refresh-agent/diff"
)

// layer is one encoding around the payload's document, outermost first.
type layer struct {
	gzip    bool // else base64
	url     bool // base64: the URL alphabet
	padded  bool // base64: with '=' padding
	newline bool // the layer's text ended with a newline
}

// maxLayers bounds the encodings unwrapped, as the decoder does.
const maxLayers = 4

// unwrap peels gzip and base64 off raw as the decoder detects them, returning the layers and the
// document (JSON or YAML) inside. The decoder has accepted raw already.
func unwrap(raw []byte) ([]layer, []byte, error) {
	var layers []layer
	cur := raw
	for range maxLayers + 1 {
		trimmed := bytes.Trim(cur, " \t\r\n")
		switch {
		case bytes.HasPrefix(trimmed, []byte{0x1f, 0x8b}):
			zr, err := gzip.NewReader(bytes.NewReader(trimmed))
			if err != nil {
				return nil, nil, fmt.Errorf("gzip: %w", err)
			}
			// Bounded as the decode is: a gzip bomb is refused, not inflated.
			inner, err := io.ReadAll(io.LimitReader(zr, diff.MaxPayloadSize+1))
			if err != nil {
				return nil, nil, fmt.Errorf("gzip: %w", err)
			}
			if int64(len(inner)) > diff.MaxPayloadSize {
				return nil, nil, fmt.Errorf("gzip: decompressed size exceeds the %d byte limit (--max-payload-bytes)", diff.MaxPayloadSize)
			}
			layers = append(layers, layer{gzip: true})
			cur = inner
		case len(trimmed) > 0 && trimmed[0] != '{' && diff.IsBase64(trimmed):
			l := layer{newline: bytes.HasSuffix(cur, []byte("\n"))}
			clean := bytes.Map(func(r rune) rune {
				if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
					return -1
				}
				return r
			}, trimmed)
			l.url = bytes.ContainsAny(clean, "-_")
			// Unpadded only when the input shows it: a padded encoding of a multiple of 3 bytes has no '='.
			l.padded = bytes.HasSuffix(clean, []byte("=")) || len(clean)%4 == 0
			enc := base64.RawStdEncoding
			if l.url {
				enc = base64.RawURLEncoding
			}
			inner, err := enc.DecodeString(string(bytes.TrimRight(clean, "=")))
			if err != nil {
				return nil, nil, fmt.Errorf("base64: %w", err)
			}
			layers = append(layers, l)
			cur = inner
		default:
			return layers, cur, nil
		}
	}
	return nil, nil, errors.New("payload is wrapped in too many encodings")
}

// Document returns the JSON or YAML document inside a payload's encodings (gzip, base64).
func Document(raw []byte) ([]byte, error) {
	_, doc, err := unwrap(raw)
	return doc, err
}

// wrapLayers puts doc back into the layers unwrap found (gzip at the best compression, as
// HyperShift's CompressAndEncode writes it).
func wrapLayers(doc []byte, layers []layer) ([]byte, error) {
	out := doc
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		if l.gzip {
			var b bytes.Buffer
			zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
			if err != nil {
				return nil, err
			}
			if _, err := zw.Write(out); err != nil {
				return nil, err
			}
			if err := zw.Close(); err != nil {
				return nil, err
			}
			out = b.Bytes()
			continue
		}
		enc := map[[2]bool]*base64.Encoding{
			{false, false}: base64.RawStdEncoding, {false, true}: base64.StdEncoding,
			{true, false}: base64.RawURLEncoding, {true, true}: base64.URLEncoding,
		}[[2]bool{l.url, l.padded}]
		s := enc.EncodeToString(out)
		if l.newline {
			s += "\n"
		}
		out = []byte(s)
	}
	return out, nil
}
