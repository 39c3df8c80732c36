package sparse

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheck: any server answer either fails Check or comes out sorted, unique, in the vocabulary and
// non-negative; never a panic.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`[{"index":3,"value":1.5},{"index":1,"value":0.2}]`, `[{"index":99,"value":1}]`, `[{"index":2,"value":-1}]`, `[{"index":2,"value":1},{"index":2,"value":1}]`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Vector
		if json.Unmarshal(b, &v) != nil {
			return
		}
		out, err := Check(v, 50, "fuzz")
		if err != nil {
			return
		}
		for i, e := range out {
			if e.Index >= 50 || !(e.Value >= 0) || math.IsInf(float64(e.Value), 0) || (i > 0 && out[i-1].Index >= e.Index) {
				t.Fatalf("Check passed %v", out)
			}
		}
	})
}

// FuzzOpenVectors: a vectors.bin of any bytes (with a matching checksum, so that the parser itself is
// exercised) opens as an index or fails with an error; never a panic.
func FuzzOpenVectors(f *testing.F) {
	rec := func(entries ...[2]uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(entries)))
		for _, e := range entries {
			b = binary.LittleEndian.AppendUint32(b, e[0])
			b = binary.LittleEndian.AppendUint32(b, e[1])
		}
		return b
	}
	f.Add(rec([2]uint32{1, math.Float32bits(0.5)}), uint8(1))
	f.Add(rec([2]uint32{70, math.Float32bits(0.5)}), uint8(1))
	f.Add([]byte{1, 0, 0}, uint8(1))
	f.Add(append(rec(), rec([2]uint32{3, 0})...), uint8(2))
	f.Fuzz(func(t *testing.T, vec []byte, count uint8) {
		dir := t.TempDir()
		n := int(count % 4)
		var docs []byte
		for i := 0; i < n; i++ {
			docs = append(docs, []byte(`{"id":"d","text":"t"}`+"\n")...)
		}
		m := Meta{Format: Format, Count: n, Vocab: 64, Postings: int64(len(vec) / 8), Encoder: map[string]string{}, VectorsCRC: crc32c(vec)}
		mb, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(dir, fileMeta), mb, 0o644)
		os.WriteFile(filepath.Join(dir, fileDocs), docs, 0o644)
		os.WriteFile(filepath.Join(dir, fileVectors), vec, 0o644)
		ix, err := Open(dir, randomEncoder{vocab: 64})
		if err != nil {
			return
		}
		for i := 0; i < ix.Len(); i++ {
			ix.Search(ix.Vector(i), 3)
		}
	})
}
