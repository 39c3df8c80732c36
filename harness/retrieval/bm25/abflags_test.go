package bm25

import (
	"os"
	"strconv"
	"strings"
)

// BM25_AB_OFF (a comma-separated list) turns search features off in the test binary, so that A/B runs of
// TestSinglePass and TestSearchLoop can compare one binary with itself: fused (useFusedDecode),
// probescan (useProbeScan), taat (taatMinLists), densetf2 (useDenseTf2), denseones (useDenseOnes), recompute (useBitmapRecompute), planes (usePresencePlanes), planesdirect (usePlanesDirect), scanregs (useScanRegs), splitblocks (useSplitBlocks), fillslack (useFillSlack), simd (useSIMDDecode), simdplanes (useSIMDPlanes), flatscan (useFlatScan). BM25_AB_WINDOW sets windowDocs, BM25_AB_TAATMIN
// taatMinLists. Beware: a feature's off path in the same binary is not the code without the feature (it
// may still pay for the feature's branches or tables), so compare with the previous commit's binary too.
func init() {
	if v, err := strconv.Atoi(os.Getenv("BM25_AB_WINDOW")); err == nil && v > 0 {
		windowDocs = v
	}
	if v, err := strconv.Atoi(os.Getenv("BM25_AB_TAATMIN")); err == nil && v > 0 {
		taatMinLists = v
	}
	setABOff(os.Getenv("BM25_AB_OFF"))
}

// setABOff turns off the features named in off (BM25_AB_OFF's syntax, plus window=N for windowDocs and taatmin=N for taatMinLists) and
// returns a function that turns them back to what they were.
func setABOff(off string) (restore func()) {
	f, ps, tm, d2, do, rc, pl, pd, sr, sb, wd, fs, sd, sp, fl := useFusedDecode, useProbeScan, taatMinLists, useDenseTf2, useDenseOnes, useBitmapRecompute, usePresencePlanes, usePlanesDirect, useScanRegs, useSplitBlocks, windowDocs, useFillSlack, useSIMDDecode, useSIMDPlanes, useFlatScan
	for _, f := range strings.Split(off, ",") {
		if v, ok := strings.CutPrefix(f, "taatmin="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				taatMinLists = n
			}
		}
		if v, ok := strings.CutPrefix(f, "window="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				windowDocs = n
			}
		}
		switch f {
		case "fused":
			useFusedDecode = false
		case "probescan":
			useProbeScan = false
		case "taat":
			taatMinLists = 0
		case "densetf2":
			useDenseTf2 = false
		case "denseones":
			useDenseOnes = false
		case "recompute":
			useBitmapRecompute = false
		case "planes":
			usePresencePlanes = false
		case "planesdirect":
			usePlanesDirect = false
		case "scanregs":
			useScanRegs = false
		case "splitblocks":
			useSplitBlocks = false
		case "fillslack":
			useFillSlack = false
		case "simd":
			useSIMDDecode = false
		case "simdplanes":
			useSIMDPlanes = false
		case "flatscan":
			useFlatScan = false
		}
	}
	return func() {
		useFusedDecode, useProbeScan, taatMinLists, useDenseTf2, useDenseOnes, useBitmapRecompute, usePresencePlanes, usePlanesDirect, useScanRegs, useSplitBlocks, windowDocs, useFillSlack, useSIMDDecode, useSIMDPlanes, useFlatScan = f, ps, tm, d2, do, rc, pl, pd, sr, sb, wd, fs, sd, sp, fl
	}
}
