package bm25

import "sync"

// postPool hands out the postings arrays of batches (term ids and frequencies) from memory outside the Go
// heap, on huge pages, and takes them back once the spill has copied a batch's postings. The batches of
// a build allocate about 8 bytes per posting in all (hundreds of MB for a million passages), which on
// the Go heap kept its size, and with it the number of freshly touched 4 KiB pages (each first touch
// costs more than 10 us on a virtual machine), far above what is live at any time; recycled huge-page
// slabs are touched once. Slabs come in size classes two per octave (at most a third larger than asked
// for). A request larger than the largest class is served from the Go heap.
type postPool struct {
	mu    sync.Mutex
	free  [len(slabSizes)][]slab
	frees []func()
}

// slab is a pair of arrays of one size class (class -1: on the Go heap, not returned).
type slab struct {
	ids   []int32
	tfs   []uint32
	class int
}

// slabSizes are the size classes in entries: 4096 * 2^(k/2), alternately times 1 and 1.5.
var slabSizes = func() (s [18]int) {
	for k := range s {
		s[k] = 4096 << (k / 2)
		if k%2 == 1 {
			s[k] += s[k] / 2
		}
	}
	return
}()

// get returns a slab of at least n entries (both arrays of length 0).
func (p *postPool) get(n int) slab {
	c := 0
	for c < len(slabSizes) && slabSizes[c] < n {
		c++
	}
	if c == len(slabSizes) {
		return slab{ids: make([]int32, 0, n), tfs: make([]uint32, 0, n), class: -1}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free[c]) == 0 {
		// A region of at least 4 MiB per array (hugeMin), cut into slabs.
		size := slabSizes[c]
		per := max(4, (hugeMin+4*size-1)/(4*size))
		ids, f1 := hugeAlloc[int32](per * size)
		tfs, f2 := hugeAlloc[uint32](per * size)
		p.frees = append(p.frees, f1, f2)
		for i := 0; i < per; i++ {
			p.free[c] = append(p.free[c], slab{ids: ids[i*size : i*size : (i+1)*size], tfs: tfs[i*size : i*size : (i+1)*size], class: c})
		}
	}
	s := p.free[c][len(p.free[c])-1]
	p.free[c] = p.free[c][:len(p.free[c])-1]
	return s
}

// put takes a slab back; its arrays must not be used afterwards.
func (p *postPool) put(s slab) {
	if s.class < 0 {
		return
	}
	p.mu.Lock()
	p.free[s.class] = append(p.free[s.class], slab{ids: s.ids[:0], tfs: s.tfs[:0], class: s.class})
	p.mu.Unlock()
}

// release unmaps all slabs; nothing may use them afterwards.
func (p *postPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.frees {
		if f != nil {
			f()
		}
	}
	p.frees = nil
	p.free = [len(slabSizes)][]slab{}
}
