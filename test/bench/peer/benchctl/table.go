// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The figures of the table, in order, with how to read them.
var tableRows = []struct{ key, label string }{
	{"ready_s", "start to ready (s)"},
	{"converge_s", "first create to all Available (s)"},
	{"cpu_converge_s", "CPU to converge, from start (s)"},
	{"cpu_total_s", "CPU, whole run (s)"},
	{"rss_peak_mib", "peak RSS (MiB)"},
	{"rss_settled_mib", "settled RSS (MiB)"},
	{"writes_per_app", "writes per AppService, create to settled"},
	{"writes_rest_per_min", "writes per minute at rest"},
	{"req_GET", "requests GET (start to rest)"},
	{"req_POST", "requests POST"},
	{"req_PUT", "requests PUT"},
	{"req_PATCH", "requests PATCH"},
	{"req_DELETE", "requests DELETE"},
	{"delete_s", "delete all (s)"},
	{"children_settled_s", "children settled after create (s)"},
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

type group struct{ n, size int }

// tableCmd prints, per (N, size), the median of each figure for ours and the peer and their
// ratio. With -tsv it prints one line per (N, size, op) with every median, for the plots.
func tableCmd(args []string) error {
	fs := flag.NewFlagSet("table", flag.ExitOnError)
	tsv := fs.Bool("tsv", false, "machine-readable medians")
	_ = fs.Parse(args)
	values := map[group]map[string]map[string][]float64{} // group -> op -> key -> samples
	rounds := map[group]map[string]int{}
	for _, path := range fs.Args() {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			kv := map[string]string{}
			for _, field := range strings.Fields(sc.Text()) {
				if k, v, ok := strings.Cut(field, "="); ok {
					kv[k] = v
				}
			}
			op := kv["op"]
			n, err1 := strconv.Atoi(kv["n"])
			size, err2 := strconv.Atoi(kv["size"])
			if op == "" || err1 != nil || err2 != nil {
				continue
			}
			g := group{n, size}
			if values[g] == nil {
				values[g] = map[string]map[string][]float64{}
				rounds[g] = map[string]int{}
			}
			if values[g][op] == nil {
				values[g][op] = map[string][]float64{}
			}
			rounds[g][op]++
			for k, v := range kv {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					values[g][op][k] = append(values[g][op][k], x)
				}
			}
		}
		file.Close()
	}
	groups := make([]group, 0, len(values))
	for g := range values {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].n != groups[j].n {
			return groups[i].n < groups[j].n
		}
		return groups[i].size < groups[j].size
	})
	med := func(g group, op, key string) (float64, bool) {
		xs := values[g][op][key]
		if len(xs) == 0 {
			return 0, false
		}
		return median(append([]float64(nil), xs...)), true
	}
	if *tsv {
		fmt.Printf("n\tsize\top\trounds")
		for _, r := range tableRows {
			fmt.Printf("\t%s", r.key)
		}
		fmt.Println()
		for _, g := range groups {
			for _, op := range []string{"ours", "peer"} {
				if rounds[g][op] == 0 {
					continue
				}
				fmt.Printf("%d\t%d\t%s\t%d", g.n, g.size, op, rounds[g][op])
				for _, r := range tableRows {
					m, _ := med(g, op, r.key)
					fmt.Printf("\t%g", m)
				}
				fmt.Println()
			}
		}
		return nil
	}
	for _, g := range groups {
		fmt.Printf("\nN = %d, size %d (medians of %d rounds ours, %d peer)\n\n",
			g.n, g.size, rounds[g]["ours"], rounds[g]["peer"])
		fmt.Println("| figure | ours | peer | ours/peer |")
		fmt.Println("|---|---:|---:|---:|")
		for _, r := range tableRows {
			a, okA := med(g, "ours", r.key)
			b, okB := med(g, "peer", r.key)
			if !okA && !okB {
				continue
			}
			ratio := "-"
			if okA && okB && b != 0 {
				ratio = fmt.Sprintf("%.2f", a/b)
			}
			fmt.Printf("| %s | %s | %s | %s |\n", r.label, num(a, okA), num(b, okB), ratio)
		}
	}
	return nil
}

func num(x float64, ok bool) string {
	if !ok {
		return "-"
	}
	if x == float64(int64(x)) {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
