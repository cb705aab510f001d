// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// What /proc says about the operator process.

const clockTicks = 100 // USER_HZ on Linux

// cpuSeconds is user + system time of the process so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count fields after its closing parenthesis.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks, nil
}

// memoryKiB returns VmHWM (peak RSS) and VmRSS (now) in KiB.
func memoryKiB(pid int) (peak, now int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "VmHWM:":
			peak, _ = strconv.ParseInt(fields[1], 10, 64)
		case "VmRSS:":
			now, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	return peak, now, sc.Err()
}

// requestsByVerb sums the operator's own rest_client_requests_total by method.
func requestsByVerb(metricsURL string) (map[string]float64, error) {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	found := false
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		found = true
		i := strings.Index(line, `method="`)
		end := strings.LastIndexByte(line, ' ')
		if i < 0 || end < 0 {
			continue
		}
		method := line[i+len(`method="`):]
		method = method[:strings.IndexByte(method, '"')]
		v, err := strconv.ParseFloat(line[end+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("bad metric line %q", line)
		}
		out[method] += v
	}
	if !found {
		return nil, fmt.Errorf("rest_client_requests_total missing on %s", metricsURL)
	}
	return out, nil
}

func writes(byVerb map[string]float64) float64 {
	var n float64
	for verb, v := range byVerb {
		if verb != "GET" {
			n += v
		}
	}
	return n
}

// waitReady polls url until it answers 200.
func waitReady(url string, deadline time.Duration) error {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %s", url, deadline)
}
