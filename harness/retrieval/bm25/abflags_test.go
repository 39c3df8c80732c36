package bm25

import (
	"os"
	"strconv"
	"strings"
)

// BM25_AB_OFF (a comma-separated list) turns search features off in the test binary, so that A/B runs of
// TestSinglePass and TestSearchLoop can compare one binary with itself: fused (useFusedDecode),
// probescan (useProbeScan), taat (taatMinLists), densetf2 (useDenseTf2), denseones (useDenseOnes), recompute (useBitmapRecompute), planes (usePresencePlanes), planesdirect (usePlanesDirect), splitblocks (useSplitBlocks). BM25_AB_WINDOW sets windowDocs, BM25_AB_TAATMIN
// taatMinLists. Beware: a feature's off path in the same binary is not the code without the feature (it
// may still pay for the feature's branches or tables), so compare with the previous commit's binary too.
func init() {
	if v, err := strconv.Atoi(os.Getenv("BM25_AB_WINDOW")); err == nil && v > 0 {
		windowDocs = v
	}
	if v, err := strconv.Atoi(os.Getenv("BM25_AB_TAATMIN")); err == nil && v > 0 {
		taatMinLists = v
	}
	for _, f := range strings.Split(os.Getenv("BM25_AB_OFF"), ",") {
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
		case "splitblocks":
			useSplitBlocks = false
		case "planesdirect":
			usePlanesDirect = false
		}
	}
}
