// SPDX-License-Identifier: Apache-2.0

// benchctl: the measuring half of test/bench/run.sh. run.sh starts and stops the operators;
// benchctl drives the API server and reads the operator's /proc and /metrics at the right moments.
//
//	benchctl run     -pid P -metrics URL -ready URL -started NS -namespace NS -count N -size S ...
//	                 one measured run; prints one line of key=value figures
//	benchctl writes  -namespace NS -count N -workers W   the API server's raw write rate
//	benchctl table   FILE...                             medians per (N, size) and ours/peer
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchctl run|writes|table ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "writes":
		err = writesCmd(os.Args[2:])
	case "table":
		err = tableCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchctl:", err)
		os.Exit(1)
	}
}
