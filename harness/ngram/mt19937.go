package ngram

// mt19937 is the 32-bit Mersenne Twister (std::mt19937), used to reproduce Infini-gram's subsampling.
type mt19937 struct {
	mt  [624]uint32
	idx int
}

func newMT19937(seed uint32) *mt19937 {
	g := &mt19937{}
	g.mt[0] = seed
	for i := 1; i < 624; i++ {
		g.mt[i] = 1812433253*(g.mt[i-1]^(g.mt[i-1]>>30)) + uint32(i)
	}
	g.idx = 624
	return g
}

func (g *mt19937) next() uint32 {
	if g.idx >= 624 {
		for i := 0; i < 624; i++ {
			y := (g.mt[i] & 0x80000000) | (g.mt[(i+1)%624] & 0x7fffffff)
			v := g.mt[(i+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			g.mt[i] = v
		}
		g.idx = 0
	}
	y := g.mt[g.idx]
	g.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// uniform returns a value in [0, hi], following libstdc++'s std::uniform_int_distribution<uint64_t> with
// a 32-bit generator: Lemire's nearly-divisionless method for ranges below 2^32, and the upscaling
// combination of two draws above.
func (g *mt19937) uniform(hi uint64) uint64 {
	if hi < 0xFFFFFFFF {
		r := uint32(hi + 1)
		prod := uint64(g.next()) * uint64(r)
		low := uint32(prod)
		if low < r {
			thresh := -r % r
			for low < thresh {
				prod = uint64(g.next()) * uint64(r)
				low = uint32(prod)
			}
		}
		return prod >> 32
	}
	if hi == 0xFFFFFFFF {
		return uint64(g.next())
	}
	// Upscaling: ret = tmp * 2^32 + next(), rejecting out-of-range or overflowing results.
	const uerngrange = uint64(1) << 32
	for {
		tmp := uerngrange * g.uniform(hi/uerngrange)
		ret := tmp + uint64(g.next())
		if ret <= hi && ret >= tmp {
			return ret
		}
	}
}
