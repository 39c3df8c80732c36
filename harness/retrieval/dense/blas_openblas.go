//go:build openblas && cgo

package dense

/*
#cgo LDFLAGS: -lopenblas
char* openblas_get_corename(void);
char* openblas_get_config(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
*/
import "C"

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/netlib/blas/netlib"
)

// With the openblas build tag, exact search runs on the system's OpenBLAS (cgo, -lopenblas) through
// gonum's netlib binding instead of gonum's pure-Go Sgemm. OpenBLAS runs one thread per call: the
// parallelism is scan's, one row range per GOMAXPROCS, so that no core waits (or spins, as OpenBLAS's
// idle threads do) while another selects a block's top k.
func init() {
	C.openblas_set_num_threads(1)
	blas32.Use(netlib.Implementation{})
}

// scanParallelism is the number of row ranges scanned at once, each by single-threaded OpenBLAS calls.
func scanParallelism() int { return runtime.GOMAXPROCS(0) }

// BLAS names the Sgemm that exact search runs on, with OpenBLAS's kernel (core type) and thread count.
func BLAS() string {
	return fmt.Sprintf("OpenBLAS (cgo, gonum netlib binding): %s, kernel %s, %d thread per call, %d calls at once",
		C.GoString(C.openblas_get_config()), C.GoString(C.openblas_get_corename()), int(C.openblas_get_num_threads()), scanParallelism())
}
