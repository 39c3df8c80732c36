package dense

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// numpyScript is the numpy peer of the exact-search benchmark: it memory-maps the same vectors.f32,
// reads the same (unnormalised) queries, normalises them as Index.SearchVectors does, and times, per
// batch, Q·Vᵀ (one matmul, so OpenBLAS sgemm) and the whole search (matmul, argpartition for the top k,
// sort of those k). It reports the OpenBLAS library numpy loaded and the kernel (core type) it chose.
const numpyScript = `
import ctypes, json, sys, time
import numpy as np
vec, qf, n, d, nq, batch, k, check = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:9])
V = np.memmap(vec, dtype="<f4", mode="r", shape=(n, d))
Q = np.fromfile(qf, dtype="<f4").reshape(nq, d)
Q = Q / np.linalg.norm(Q, axis=1, keepdims=True).astype(np.float32)
info = {"numpy": np.__version__, "library": "", "config": "", "kernel": "", "threads": 0}
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "openblas" in p and p.endswith((".so", ".so.0")) or "libopenblas" in p:
        lib = ctypes.CDLL(p)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        info.update(library=p, config=lib.openblas_get_config().decode(),
                    kernel=lib.openblas_get_corename().decode(), threads=lib.openblas_get_num_threads())
        break
def search(q):
    t0 = time.perf_counter()
    S = q @ V.T
    t1 = time.perf_counter()
    I = np.argpartition(S, -k, axis=1)[:, -k:]
    o = np.argsort(-np.take_along_axis(S, I, axis=1), axis=1, kind="stable")
    I = np.take_along_axis(I, o, axis=1)
    return I, t1 - t0, time.perf_counter() - t0
search(Q[:batch])  # warm the page cache and the library
mm, tot, top = [], [], []
for s in range(0, nq, batch):
    I, a, b = search(Q[s:s + batch])
    mm.append(a); tot.append(b)
    top.extend(I[:max(0, check - len(top))].tolist())
info.update(matmul_seconds=mm, search_seconds=tot, top=top)
json.dump(info, sys.stdout)
`

// NumpyResult is one run of the numpy peer: the OpenBLAS numpy loaded, the kernel it chose, and per batch
// the seconds of the matmul alone and of the whole search.
type NumpyResult struct {
	Numpy         string    `json:"numpy"`
	Library       string    `json:"library"`
	Config        string    `json:"config"`
	Kernel        string    `json:"kernel"`
	Threads       int       `json:"threads"`
	MatmulSeconds []float64 `json:"matmul_seconds"`
	SearchSeconds []float64 `json:"search_seconds"`
	Top           [][]int   `json:"top"` // top-k rows of the first queries, best first
}

// numpyEnv is the environment of the numpy peer: ours without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE,
// so that numpy runs the kernel and cache sizes OpenBLAS picks for this machine by itself.
func numpyEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") || strings.HasPrefix(kv, "OPENBLAS_L2_SIZE=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runNumpy runs the numpy peer once with the given Python interpreter.
func runNumpy(ctx context.Context, python, vectors, queries string, n, dim, nq, batch, k, check int) (NumpyResult, error) {
	args := []string{"-c", numpyScript, vectors, queries}
	for _, v := range []int{n, dim, nq, batch, k, check} {
		args = append(args, strconv.Itoa(v))
	}
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Env = numpyEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		return NumpyResult{}, fmt.Errorf("numpy peer (%s): %w: %s", python, err, msg)
	}
	var r NumpyResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return NumpyResult{}, fmt.Errorf("numpy peer (%s): bad output: %w", python, err)
	}
	return r, nil
}
