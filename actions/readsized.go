package actions

import (
	"io"
	"os"
)

// ReadBounded reads f to its end, at most limit+1 bytes (the caller tells "over limit" by the length),
// into a buffer sized from f's fstat, as os.ReadFile does: io.ReadAll grows its buffer by
// doubling, so a 15.6 MiB payload allocated 33 MiB and held two copies while growing (make bench:
// the agent's peak). The size is a hint only: a file that grows after its fstat, or one whose size
// the filesystem does not report (procfs), is read on as read, never past limit+1.
func ReadBounded(f *os.File, limit int64) ([]byte, error) {
	size := int64(0)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	// One byte more than the size lets the read see EOF without growing the buffer.
	data := make([]byte, 0, max(min(size, limit)+1, 512))
	r := io.LimitReader(f, limit+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
}
