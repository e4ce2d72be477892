package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoh-research/hoh/adapters/fileid"
	"golang.org/x/sys/unix"
)

// A file's content digest is cached under its fileid.ID, so a digest of a
// workspace reads only the files changed since the last one. Files changed
// within the last racyWindow are hashed every time (fileid.ID.Settled).
// racyWindow is a variable so tests can make entries old enough to cache
// without sleeping seconds.
var racyWindow = 2 * time.Second

var digestCache sync.Map // fileid.ID -> [32]byte

// hashed counts the files read (cache misses), for tests.
var hashed atomic.Int64

func fileDigest(p string, info fs.FileInfo) ([32]byte, error) {
	id, ok := fileid.Of(info)
	if ok {
		if v, hit := digestCache.Load(id); hit {
			return v.([32]byte), nil
		}
	}
	hashed.Add(1)
	sum, err := hashFile(p)
	if err != nil {
		return sum, err
	}
	if ok && id.Settled(time.Now(), racyWindow) {
		digestCache.Store(id, sum)
	}
	return sum, nil
}

// hashFile digests the file's content so that holes cost nothing and a
// hole and written zeros digest alike: the content is taken in 4 KiB
// blocks, each maximal run of all-zero blocks is hashed as its length, each
// other block (and a short last one) as its bytes. Blocks wholly inside a
// hole (SEEK_DATA/SEEK_HOLE) are known to be zeros without reading them, so
// a 100 GiB sparse file costs what its data costs.
func hashFile(p string) ([32]byte, error) {
	var sum [32]byte
	f, err := os.Open(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sum, err
	}
	size := st.Size()
	h := sha256.New()
	var run int64 // zero blocks not yet hashed
	flush := func() {
		if run > 0 {
			var b [9]byte
			b[0] = 'Z'
			binary.BigEndian.PutUint64(b[1:], uint64(run))
			h.Write(b[:])
			run = 0
		}
	}
	buf := make([]byte, min(256*block, max(size, 1))) // small files: small buffers
	for off := int64(0); off < size; {
		// Skip the whole blocks of a hole.
		data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		switch {
		case errors.Is(err, unix.ENXIO):
			data = size
		case err != nil:
			data = off // no SEEK_DATA: read everything
		}
		if skip := (data - off) / block; skip > 0 && off%block == 0 {
			run += skip
			off += skip * block
			continue
		}
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return sum, err
		}
		if n == 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			k := min(len(b), block)
			if k == block && allZero(b[:k]) {
				run++
			} else {
				flush()
				h.Write([]byte{'D'})
				h.Write(b[:k])
			}
			b = b[k:]
		}
		off += int64(n)
	}
	flush()
	fmt.Fprintf(h, "size %d", size)
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

const block = 4096

var zeroBlock = make([]byte, block)

func allZero(b []byte) bool { return bytes.Equal(b, zeroBlock[:len(b)]) }
