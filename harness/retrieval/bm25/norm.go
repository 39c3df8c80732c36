package bm25

import "math/bits"

// Lucene stores a field's length in one byte per document (BM25Similarity.computeNorm calls
// SmallFloat.intToByte4). Lengths below numFreeValues are exact; longer lengths keep their 4 most
// significant bits, rounded down, so a 100-token passage scores as if it had 96 tokens. The functions
// below reproduce that encoding so that scores match Lucene, Pyserini and Elasticsearch.

// numFreeValues is 255 - longToInt4(math.MaxInt32) = 255 - 231.
const numFreeValues = 24

// longToInt4 is a float-like encoding of a non-negative integer with 4 significant bits.
func longToInt4(i uint64) uint32 {
	n := 64 - bits.LeadingZeros64(i)
	if n < 4 {
		return uint32(i) // subnormal
	}
	shift := n - 4
	enc := uint32(i>>uint(shift)) & 0x07 // drop the implicit leading bit
	return enc | uint32(shift+1)<<3
}

// int4ToLong decodes longToInt4.
func int4ToLong(i uint32) uint64 {
	b := uint64(i & 0x07)
	shift := int(i>>3) - 1
	if shift == -1 {
		return b
	}
	return (b | 0x08) << uint(shift)
}

// lengthToNorm encodes a field length into Lucene's norm byte (SmallFloat.intToByte4).
func lengthToNorm(n uint32) uint8 {
	if n > 1<<31-1 {
		n = 1<<31 - 1
	}
	if n < numFreeValues {
		return uint8(n)
	}
	return uint8(numFreeValues + longToInt4(uint64(n-numFreeValues)))
}

// normToLength decodes a norm byte to the length Lucene scores with (SmallFloat.byte4ToInt).
func normToLength(b uint8) uint32 {
	if b < numFreeValues {
		return uint32(b)
	}
	return uint32(numFreeValues + int4ToLong(uint32(b)-numFreeValues))
}
