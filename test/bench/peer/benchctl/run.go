// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	appServices = schema.GroupVersionResource{Group: "app.example.com", Version: "v1", Resource: "appservices"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

func restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1 // no client-side throttling: the bench must not be the bottleneck
	cfg.UserAgent = "benchctl"
	return cfg, nil
}

func dynamicClient() (*dynamic.DynamicClient, error) {
	cfg, err := restConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

func appService(name string, size int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "app.example.com/v1",
		"kind":       "AppService",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"size":  int64(size),
			"image": "nginx:1.27",
			"ports": []any{map[string]any{"port": int64(80)}},
		},
	}}
}

// parallel runs f(i) for i in [0, n) on w workers; returns the first error.
func parallel(n, w int, f func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || first.Load() != nil {
					return
				}
				if err := f(i); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

func appName(i int) string { return fmt.Sprintf("app-%05d", i) }

// converged: Available=True for the current generation.
func converged(u *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if observed != u.GetGeneration() {
		return false
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			return m["status"] == "True"
		}
	}
	return false
}

// tracker follows the namespace's AppServices and children through watches.
type tracker struct {
	mu        sync.Mutex
	done      map[string]bool // AppService name -> converged
	apps      int
	lastChild time.Time // last change to any Deployment or Service
	changed   chan struct{}
}

func (t *tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) appHandler() cache.ResourceEventHandlerFuncs {
	set := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		t.mu.Lock()
		t.done[u.GetName()] = converged(u)
		t.apps = len(t.done)
		t.mu.Unlock()
		t.signal()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				t.mu.Lock()
				delete(t.done, u.GetName())
				t.apps = len(t.done)
				t.mu.Unlock()
				t.signal()
			}
		},
	}
}

func (t *tracker) childHandler() cache.ResourceEventHandlerFuncs {
	touch := func(any) {
		t.mu.Lock()
		t.lastChild = time.Now()
		t.mu.Unlock()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: touch, UpdateFunc: func(_, o any) { touch(o) }, DeleteFunc: touch,
	}
}

func (t *tracker) convergedCount() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ok := range t.done {
		if ok {
			n++
		}
	}
	return n, t.apps
}

// waitFor re-checks cond on every watch event (and every second) until it holds.
func (t *tracker) waitFor(cond func() bool, deadline time.Duration) bool {
	timeout := time.After(deadline)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !cond() {
		select {
		case <-t.changed:
		case <-tick.C:
		case <-timeout:
			return cond()
		}
	}
	return true
}

type figures struct {
	keys   []string
	values map[string]string
}

func (f *figures) set(key string, format string, v any) {
	if f.values == nil {
		f.values = map[string]string{}
	}
	if _, ok := f.values[key]; !ok {
		f.keys = append(f.keys, key)
	}
	f.values[key] = fmt.Sprintf(format, v)
}

func (f *figures) String() string {
	parts := make([]string, len(f.keys))
	for i, k := range f.keys {
		parts[i] = k + "=" + f.values[k]
	}
	return strings.Join(parts, " ")
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	op := fs.String("op", "", "label of the operator (ours or peer)")
	pid := fs.Int("pid", 0, "operator process id")
	metricsURL := fs.String("metrics", "", "operator /metrics URL")
	readyURL := fs.String("ready", "", "operator /readyz URL")
	started := fs.Int64("started", 0, "operator start, Unix nanoseconds")
	ns := fs.String("namespace", "", "namespace to create the AppServices in")
	count := fs.Int("count", 20, "AppServices")
	size := fs.Int("size", 0, "spec.size of each")
	round := fs.Int("round", 1, "round number (recorded)")
	workers := fs.Int("workers", 8, "parallel creates")
	quiet := fs.Duration("quiet", 15*time.Second, "children settled: no Deployment or Service change for this long")
	settleMax := fs.Duration("settle-max", 10*time.Minute, "give up waiting for the children to settle after this")
	rest := fs.Duration("rest", 60*time.Second, "window at rest in which writes are counted")
	timeout := fs.Duration("timeout", 30*time.Minute, "deadline for convergence and for deletion")
	_ = fs.Parse(args)
	if *pid == 0 || *metricsURL == "" || *readyURL == "" || *ns == "" || *started == 0 {
		return fmt.Errorf("run needs -pid, -metrics, -ready, -started and -namespace")
	}
	var f figures
	f.set("op", "%s", *op)
	f.set("n", "%d", *count)
	f.set("size", "%d", *size)
	f.set("round", "%d", *round)

	if err := waitReady(*readyURL, 2*time.Minute); err != nil {
		return err
	}
	f.set("ready_s", "%.3f", time.Since(time.Unix(0, *started)).Seconds())

	client, err := dynamicClient()
	if err != nil {
		return err
	}
	t := &tracker{done: map[string]bool{}, changed: make(chan struct{}, 1)}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, *ns, nil)
	factory.ForResource(appServices).Informer().AddEventHandler(t.appHandler())
	factory.ForResource(deployments).Informer().AddEventHandler(t.childHandler())
	factory.ForResource(services).Informer().AddEventHandler(t.childHandler())
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	before, err := requestsByVerb(*metricsURL)
	if err != nil {
		return err
	}
	ctx := context.Background()
	createStart := time.Now()
	err = parallel(*count, *workers, func(i int) error {
		_, err := client.Resource(appServices).Namespace(*ns).Create(ctx, appService(appName(i), *size), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("creating AppServices: %w", err)
	}
	f.set("create_s", "%.3f", time.Since(createStart).Seconds())

	ok := t.waitFor(func() bool { n, _ := t.convergedCount(); return n == *count }, *timeout)
	if !ok {
		n, _ := t.convergedCount()
		return fmt.Errorf("%s: only %d of %d AppServices Available within %s", *op, n, *count, *timeout)
	}
	convergedAt := time.Now()
	f.set("converge_s", "%.3f", convergedAt.Sub(createStart).Seconds())
	cpu, err := cpuSeconds(*pid)
	if err != nil {
		return err
	}
	f.set("cpu_converge_s", "%.2f", cpu)
	peak, _, _ := memoryKiB(*pid)
	f.set("rss_peak_converge_mib", "%.1f", float64(peak)/1024)

	// Settled: no Deployment or Service changed for -quiet (the Deployment controller is done).
	settled := t.waitFor(func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return time.Since(t.lastChild) >= *quiet
	}, *settleMax)
	t.mu.Lock()
	f.set("children_settled_s", "%.1f", t.lastChild.Sub(createStart).Seconds())
	t.mu.Unlock()
	f.set("settled", "%t", settled)
	atSettle, err := requestsByVerb(*metricsURL)
	if err != nil {
		return err
	}
	f.set("writes_per_app", "%.2f", (writes(atSettle)-writes(before))/float64(*count))
	time.Sleep(*rest)
	afterRest, err := requestsByVerb(*metricsURL)
	if err != nil {
		return err
	}
	f.set("writes_rest_per_min", "%.1f", (writes(afterRest)-writes(atSettle))*60/rest.Seconds())
	peak, now, err := memoryKiB(*pid)
	if err != nil {
		return err
	}
	f.set("rss_peak_mib", "%.1f", float64(peak)/1024)
	f.set("rss_settled_mib", "%.1f", float64(now)/1024)
	verbs := make([]string, 0, len(afterRest))
	for v := range afterRest {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	for _, v := range verbs {
		f.set("req_"+v, "%.0f", afterRest[v])
	}

	// One delete per object, like kubectl delete --all: a deletecollection of thousands can outlast
	// the API server's request timeout.
	deleteStart := time.Now()
	err = parallel(*count, *workers, func(i int) error {
		err := client.Resource(appServices).Namespace(*ns).Delete(ctx, appName(i), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting AppServices: %w", err)
	}
	if !t.waitFor(func() bool { _, n := t.convergedCount(); return n == 0 }, *timeout) {
		_, n := t.convergedCount()
		return fmt.Errorf("%s: %d AppServices still there %s after the delete", *op, n, *timeout)
	}
	f.set("delete_s", "%.3f", time.Since(deleteStart).Seconds())
	cpu, err = cpuSeconds(*pid)
	if err != nil {
		return err
	}
	f.set("cpu_total_s", "%.2f", cpu)
	fmt.Println(f.String())
	return nil
}
