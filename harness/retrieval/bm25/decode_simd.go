//go:build goexperiment.simd && amd64

package bm25

import (
	"math/bits"
	"simd/archsimd"
)

// simdDecodeOK reports whether this CPU has what the AVX-512 block unpacking needs (F, BW, VBMI for the
// byte permutes, VBMI2 for the funnel shifts); without it decode and addBlocks keep the scalar loops.
var simdDecodeOK = archsimd.X86.AVX512() && archsimd.X86.AVX512VBMI() && archsimd.X86.AVX512VBMI2()

// simdBuild says whether this binary was built with the simd experiment on amd64 (Kernels).
const simdBuild = true

// decodeKernelsRun says whether the unpacking kernels can run on this CPU (their tests skip otherwise).
var decodeKernelsRun = simdDecodeOK

var (
	lanes16 = [16]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	// Index vectors of ConcatPermute(zero, v) that move v up by 1, 2, 4 and 8 lanes, zeros below.
	up1   = [16]uint32{0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30}
	up2   = [16]uint32{0, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}
	up4   = [16]uint32{0, 0, 0, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27}
	up8   = [16]uint32{0, 0, 0, 0, 0, 0, 0, 0, 16, 17, 18, 19, 20, 21, 22, 23}
	all15 = [16]uint32{15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15}
)

// unpackMode says how a run of values of one width is cut from its bytes: every lane within the 4
// bytes at its first byte (narrow, widths up to 25 bits), or within 8 bytes of a 64-byte register
// (wide), or of two (wide2: widths 30 to 32 from some bit offsets).
type unpackMode uint8

const (
	unpackNarrow unpackMode = iota
	unpackWide
	unpackWide2
)

// unpacker holds what cutting a run of values of width b (at most 32) from bit s (< 8) of each step's
// first byte needs; a step of 16 values is 2b bytes, so every step of a run has the same s.
type unpacker struct {
	ilo, ihi archsimd.Uint8x64  // the byte permutations that put each lane's first 4 bytes in place, and its next 4
	r, r32   archsimd.Uint32x16 // the lanes' right shifts, and 32 minus them
	mask     archsimd.Uint32x16 // the width's low bits
	mode     unpackMode
}

func newUnpacker(s, b uint) unpacker {
	q := archsimd.LoadUint32x16(&lanes16).Mul(archsimd.BroadcastUint32x16(uint32(b))).Add(archsimd.BroadcastUint32x16(uint32(s)))
	r := q.And(archsimd.BroadcastUint32x16(7))
	l := q.ShiftAllRight(3).Mul(archsimd.BroadcastUint32x16(0x01010101)).Add(archsimd.BroadcastUint32x16(0x03020100))
	u := unpacker{
		ilo:  l.AsUint8x64(),
		ihi:  l.Add(archsimd.BroadcastUint32x16(0x04040404)).AsUint8x64(),
		r:    r,
		r32:  archsimd.BroadcastUint32x16(32).Sub(r),
		mask: archsimd.BroadcastUint32x16(uint32(uint64(1)<<b - 1)),
	}
	switch {
	case b+7 <= 32:
		u.mode = unpackNarrow
	case (s+15*b)>>3+8 <= 64:
		u.mode = unpackWide
	default:
		u.mode = unpackWide2
	}
	return u
}

// fits reports whether the loads of unpacking n values of width b from bit bit stay inside src.
func (u *unpacker) fits(src []byte, bit int, b uint, n int) bool {
	need := 64
	if u.mode == unpackWide2 {
		need = 128
	}
	return bit>>3+((n-1)/16)*2*int(b)+need <= len(src)
}

// at cuts the 16 values of the step whose first byte is src[p].
func (u *unpacker) at(src []byte, p int) archsimd.Uint32x16 {
	x := archsimd.LoadUint8x64((*[64]uint8)(src[p : p+64]))
	switch u.mode {
	case unpackNarrow:
		return x.Permute(u.ilo).AsUint32x16().ShiftRight(u.r).And(u.mask)
	case unpackWide:
		lo, hi := x.Permute(u.ilo).AsUint32x16(), x.Permute(u.ihi).AsUint32x16()
		// Not ShiftRightConcat: in Go 1.26 its shift and fill operands are the other way round from its
		// documentation, so the documented shifts (a count of 32 gives 0) are used.
		return lo.ShiftRight(u.r).Or(hi.ShiftLeft(u.r32)).And(u.mask)
	default:
		y := archsimd.LoadUint8x64((*[64]uint8)(src[p+64 : p+128]))
		lo, hi := x.ConcatPermute(y, u.ilo).AsUint32x16(), x.ConcatPermute(y, u.ihi).AsUint32x16()
		return lo.ShiftRight(u.r).Or(hi.ShiftLeft(u.r32)).And(u.mask)
	}
}

// narrowMax is the widest value unpackGaps and unpackTfs cut from the 4 bytes at its first byte (its
// bit offset there is at most 7); wider ones take the unpacker.
const narrowMax = 25

// unpackGaps decodes n (> 0) document gaps of width b (at most 32 bits) bit-packed from bit bit of src
// into dst (at least n long) as documents, base plus the running sum, and returns the last; 16 gaps a
// step: a byte permute gathers each lane's bytes, variable shifts and a mask cut its value, four
// shifted adds sum the lanes, plus the carry of the steps before. ok is false, with nothing written,
// when the loads (64 or 128 bytes from a step's first byte) would pass the end of src: src should reach
// as far as the memory under it allows (the caller passes data[:cap(data)]).
func unpackGaps(src []byte, bit int, b uint, n int, base uint32, dst []uint32) (last uint32, ok bool) {
	k, ok := unpackGapsUntil(src, bit, b, n, base, noDoc, dst)
	if !ok {
		return 0, false
	}
	return dst[k-1], true
}

// unpackGapsUntil is unpackGaps that stops after the step where a document reaches target (below noDoc;
// noDoc: decode all n): it returns how many documents up to the first at or after target it decoded (n
// when none is). dst may hold documents past that one, up to the end of its step of 16.
func unpackGapsUntil(src []byte, bit int, b uint, n int, base, target uint32, dst []uint32) (k int, ok bool) {
	p, step := bit>>3, 2*int(b)
	if b > narrowMax {
		return unpackGapsWide(src, bit, b, n, base, target, dst)
	}
	if p+((n-1)/16)*step+64 > len(src) {
		return 0, false
	}
	dst = dst[:n]
	// The lanes' bit offsets from the step's first byte, their bytes and shifts (as newUnpacker).
	q := archsimd.LoadUint32x16(&lanes16).Mul(archsimd.BroadcastUint32x16(uint32(b))).Add(archsimd.BroadcastUint32x16(uint32(bit & 7)))
	r := q.And(archsimd.BroadcastUint32x16(7))
	idx := q.ShiftAllRight(3).Mul(archsimd.BroadcastUint32x16(0x01010101)).Add(archsimd.BroadcastUint32x16(0x03020100)).AsUint8x64()
	mask := archsimd.BroadcastUint32x16(uint32(1)<<b - 1)
	u1, u2, u4, u8 := archsimd.LoadUint32x16(&up1), archsimd.LoadUint32x16(&up2), archsimd.LoadUint32x16(&up4), archsimd.LoadUint32x16(&up8)
	a15 := archsimd.LoadUint32x16(&all15)
	tv := archsimd.BroadcastUint32x16(target)
	var zero archsimd.Uint32x16
	carry := archsimd.BroadcastUint32x16(base)
	for j := 0; j < n; j, p = j+16, p+step {
		v := archsimd.LoadUint8x64((*[64]uint8)(src[p : p+64])).Permute(idx).AsUint32x16().ShiftRight(r).And(mask)
		v = v.Add(zero.ConcatPermute(v, u1))
		v = v.Add(zero.ConcatPermute(v, u2))
		v = v.Add(zero.ConcatPermute(v, u4))
		v = v.Add(zero.ConcatPermute(v, u8))
		out := v.Add(carry)
		carry = carry.Add(v.Permute(a15))
		if n-j >= 16 {
			out.Store((*[16]uint32)(dst[j : j+16]))
		} else {
			out.StoreSlicePart(dst[j:])
		}
		if target != noDoc {
			if hit := uint32(out.GreaterEqual(tv).ToBits()); hit != 0 {
				return min(j+bits.TrailingZeros32(hit)+1, n), true
			}
		}
	}
	return n, true
}

// unpackGapsWide is unpackGapsUntil for widths above narrowMax, by the unpacker.
func unpackGapsWide(src []byte, bit int, b uint, n int, base, target uint32, dst []uint32) (k int, ok bool) {
	u := newUnpacker(uint(bit&7), b)
	if !u.fits(src, bit, b, n) {
		return 0, false
	}
	dst = dst[:n]
	u1, u2, u4, u8 := archsimd.LoadUint32x16(&up1), archsimd.LoadUint32x16(&up2), archsimd.LoadUint32x16(&up4), archsimd.LoadUint32x16(&up8)
	a15 := archsimd.LoadUint32x16(&all15)
	tv := archsimd.BroadcastUint32x16(target)
	var zero archsimd.Uint32x16
	carry := archsimd.BroadcastUint32x16(base)
	p, step := bit>>3, 2*int(b)
	for j := 0; j < n; j, p = j+16, p+step {
		v := u.at(src, p)
		v = v.Add(zero.ConcatPermute(v, u1))
		v = v.Add(zero.ConcatPermute(v, u2))
		v = v.Add(zero.ConcatPermute(v, u4))
		v = v.Add(zero.ConcatPermute(v, u8))
		out := v.Add(carry)
		carry = carry.Add(v.Permute(a15))
		if n-j >= 16 {
			out.Store((*[16]uint32)(dst[j : j+16]))
		} else {
			out.StoreSlicePart(dst[j:])
		}
		if target != noDoc {
			if hit := uint32(out.GreaterEqual(tv).ToBits()); hit != 0 {
				return min(j+bits.TrailingZeros32(hit)+1, n), true
			}
		}
	}
	return n, true
}

// unpackTfs decodes n (> 0) tf-1 values of width b (at most 32 bits; 0: every tf is 1) bit-packed from
// bit bit of src into dst (at least n long) as tfs, 16 a step as unpackGaps does (without the sums); ok
// as for unpackGaps.
func unpackTfs(src []byte, bit int, b uint, n int, dst []uint32) bool {
	dst = dst[:n]
	one := archsimd.BroadcastUint32x16(1)
	if b == 0 {
		for j := 0; j < n; j += 16 {
			if n-j >= 16 {
				one.Store((*[16]uint32)(dst[j : j+16]))
			} else {
				one.StoreSlicePart(dst[j:])
			}
		}
		return true
	}
	p, step := bit>>3, 2*int(b)
	if b <= narrowMax {
		if p+((n-1)/16)*step+64 > len(src) {
			return false
		}
		q := archsimd.LoadUint32x16(&lanes16).Mul(archsimd.BroadcastUint32x16(uint32(b))).Add(archsimd.BroadcastUint32x16(uint32(bit & 7)))
		r := q.And(archsimd.BroadcastUint32x16(7))
		idx := q.ShiftAllRight(3).Mul(archsimd.BroadcastUint32x16(0x01010101)).Add(archsimd.BroadcastUint32x16(0x03020100)).AsUint8x64()
		mask := archsimd.BroadcastUint32x16(uint32(1)<<b - 1)
		for j := 0; j < n; j, p = j+16, p+step {
			out := archsimd.LoadUint8x64((*[64]uint8)(src[p : p+64])).Permute(idx).AsUint32x16().ShiftRight(r).And(mask).Add(one)
			if n-j >= 16 {
				out.Store((*[16]uint32)(dst[j : j+16]))
			} else {
				out.StoreSlicePart(dst[j:])
			}
		}
		return true
	}
	u := newUnpacker(uint(bit&7), b)
	if !u.fits(src, bit, b, n) {
		return false
	}
	for j := 0; j < n; j, p = j+16, p+step {
		out := u.at(src, p).Add(one)
		if n-j >= 16 {
			out.Store((*[16]uint32)(dst[j : j+16]))
		} else {
			out.StoreSlicePart(dst[j:])
		}
	}
	return true
}
