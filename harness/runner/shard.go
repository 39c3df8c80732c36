package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseShard reads the shard to run: spec "K/N" (0-based K) when given; else the batch system's
// array index: Slurm's SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (the task id is taken relative
// to SLURM_ARRAY_TASK_MIN when set), or a Kubernetes indexed Job's JOB_COMPLETION_INDEX with count
// (the --shards flag) or $RAGBENCH_SHARDS. It returns 0, 1 for an unsharded run; a count without an
// index is an error (it would silently run everything).
func ParseShard(spec string, count int, getenv func(string) string) (k, n int, err error) {
	if spec != "" {
		ks, ns, ok := strings.Cut(spec, "/")
		if !ok {
			return 0, 0, fmt.Errorf("shard %q: want K/N, for example 0/4", spec)
		}
		k, err1 := strconv.Atoi(ks)
		n, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
			return 0, 0, fmt.Errorf("shard %q: want K/N with 0 <= K < N", spec)
		}
		if count > 0 && count != n {
			return 0, 0, fmt.Errorf("--shard %s and --shards %d disagree on the shard count", spec, count)
		}
		return k, n, nil
	}
	if id := getenv("SLURM_ARRAY_TASK_ID"); id != "" {
		cnt := getenv("SLURM_ARRAY_TASK_COUNT")
		k, err1 := strconv.Atoi(id)
		n, err2 := strconv.Atoi(cnt)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("SLURM_ARRAY_TASK_ID=%q SLURM_ARRAY_TASK_COUNT=%q: want integers", id, cnt)
		}
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			mi, err := strconv.Atoi(m)
			if err != nil {
				return 0, 0, fmt.Errorf("SLURM_ARRAY_TASK_MIN=%q: want an integer", m)
			}
			k -= mi
		}
		if n < 1 || k < 0 || k >= n {
			return 0, 0, fmt.Errorf("Slurm array task %d of %d: want 0 <= task < count (use --array=0-%d)", k, n, n-1)
		}
		return k, n, nil
	}
	if id := getenv("JOB_COMPLETION_INDEX"); id != "" {
		k, err := strconv.Atoi(id)
		if err != nil {
			return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%q: want an integer", id)
		}
		n := count
		if n == 0 {
			if s := getenv("RAGBENCH_SHARDS"); s != "" {
				n, err = strconv.Atoi(s)
				if err != nil {
					return 0, 0, fmt.Errorf("RAGBENCH_SHARDS=%q: want an integer", s)
				}
			}
		}
		if n < 1 {
			return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%d is set but the shard count is not: give --shards N (the Job's completions) or RAGBENCH_SHARDS", k)
		}
		if k < 0 || k >= n {
			return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%d: want 0 <= index < %d", k, n)
		}
		return k, n, nil
	}
	if count > 0 {
		return 0, 0, fmt.Errorf("--shards %d names the shard count but not this shard: JOB_COMPLETION_INDEX (a Kubernetes indexed Job) is not set; give --shard K/%d to run shard K by hand", count, count)
	}
	return 0, 1, nil
}
