package bm25

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"strconv"
	"strings"
)

// Synth makes synthetic text for benchmarks: words are drawn from a Zipf distribution (exponent 1.3,
// offset 5) over a vocabulary of pseudo-words whose most frequent ranks are common English words, many of
// them stopwords. The parameters were chosen so that the vocabulary grows like real Wikipedia passages'
// at small scale (about 29k distinct words in the first 273k tokens, against 26k terms in the 4,337
// passages of nq-wiki-passages.tsv) and somewhat faster at large scale (431k in 14.5M tokens), which
// makes the dictionary larger than real text's (a conservative choice for index size). Passages have
// 90 to 110 words, like DPR's psgs_w100.
type Synth struct {
	r     *rand.Rand
	z     *rand.Zipf
	words []string
}

// SynthVocab is the synthetic vocabulary size.
const SynthVocab = 1 << 21

// NewSynth returns a deterministic generator for the seed.
func NewSynth(seed int64) *Synth {
	r := rand.New(rand.NewSource(seed))
	s := &Synth{r: r, z: rand.NewZipf(r, 1.3, 5, SynthVocab-1)}
	stop := strings.Fields("the of and in to a was is for on as by with he that at from his it an were are which this be also or has had first one their its after new who they two her she been other when time during there into school all but more years not out")
	s.words = make([]string, SynthVocab)
	for i := range s.words {
		if i < len(stop) {
			s.words[i] = stop[i]
			continue
		}
		s.words[i] = pseudoWord(i)
	}
	return s
}

// pseudoWord spells i with consonant-vowel syllables.
func pseudoWord(i int) string {
	const cons = "bcdfghjklmnprstvwz"
	const vows = "aeiou"
	var b []byte
	for {
		b = append(b, cons[i%len(cons)])
		i /= len(cons)
		b = append(b, vows[i%len(vows)])
		i /= len(vows)
		if i == 0 {
			break
		}
	}
	return string(b)
}

// Word returns one word.
func (s *Synth) Word() string { return s.words[s.z.Uint64()] }

// Passage appends n words separated by spaces to dst.
func (s *Synth) Passage(dst []byte, n int) []byte {
	for j := 0; j < n; j++ {
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, s.Word()...)
	}
	return dst
}

// Query returns a query of 4 to 12 words.
func (s *Synth) Query() string {
	n := 4 + s.r.Intn(9)
	return string(s.Passage(nil, n))
}

// ContentQuery returns a query of 3 to 8 words drawn from the same distribution but without the 100 most
// frequent words: a query of content words only, rarer than Query's.
func (s *Synth) ContentQuery() string {
	n := 3 + s.r.Intn(6)
	var b []byte
	for len(b) == 0 || n > 0 {
		r := s.z.Uint64()
		if r < 100 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, s.words[r]...)
		n--
	}
	return string(b)
}

// WriteTSV writes n passages of about 100 words in DPR TSV form (id, text, title, with a header).
func (s *Synth) WriteTSV(ctx context.Context, w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("id\ttext\ttitle\n")
	var line []byte
	for i := 0; i < n; i++ {
		if i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line = strconv.AppendInt(line[:0], int64(i+1), 10)
		line = append(line, '\t')
		line = s.Passage(line, 90+s.r.Intn(21))
		line = append(line, '\t')
		line = s.Passage(line, 1+s.r.Intn(3))
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return fmt.Errorf("write synthetic corpus: %w", err)
		}
	}
	return bw.Flush()
}
