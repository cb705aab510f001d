// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// writesCmd measures the API server's own write rate for the operator's job: a "perfect
// operator" that needs no watch and no reads, W clients each creating an AppService and then
// making the four writes appservice-operator makes for it at size 0 (finalizer, Deployment,
// Service, status), back to back. Convergence of a real operator is bounded by this.
func writesCmd(args []string) error {
	fs := flag.NewFlagSet("writes", flag.ExitOnError)
	ns := fs.String("namespace", "", "namespace to write in")
	count := fs.Int("count", 1000, "AppServices")
	workers := fs.Int("workers", 4, "parallel clients")
	_ = fs.Parse(args)
	if *ns == "" {
		return fmt.Errorf("writes needs -namespace")
	}
	client, err := dynamicClient()
	if err != nil {
		return err
	}
	ctx := context.Background()
	apps := client.Resource(appServices).Namespace(*ns)
	start := time.Now()
	err = parallel(*count, *workers, func(i int) error {
		name := fmt.Sprintf("raw-%05d", i)
		app, err := apps.Create(ctx, appService(name, 0), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		finalizer := []byte(`[{"op":"add","path":"/metadata/finalizers","value":["app.example.com/cleanup"]}]`)
		if _, err := apps.Patch(ctx, name, types.JSONPatchType, finalizer, metav1.PatchOptions{}); err != nil {
			return err
		}
		for _, child := range children(app) {
			gvr := deployments
			if child.GetKind() == "Service" {
				gvr = services
			}
			_, err := client.Resource(gvr).Namespace(*ns).Create(ctx, child, metav1.CreateOptions{FieldManager: "benchctl"})
			if err != nil {
				return err
			}
		}
		status := []byte(`{"status":{"observedGeneration":1,"selector":"app.example.com/appservice=` + name +
			`","conditions":[{"type":"Available","status":"True","reason":"ScaledToZero","message":"size is 0",` +
			`"observedGeneration":1,"lastTransitionTime":"` + time.Now().UTC().Format(time.RFC3339) + `"}]}}`)
		_, err = apps.Patch(ctx, name, types.MergePatchType, status, metav1.PatchOptions{}, "status")
		return err
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(start).Seconds()
	total := *count * 5
	fmt.Printf("n=%d workers=%d writes=%d elapsed_s=%.3f writes_per_s=%.1f\n",
		*count, *workers, total, elapsed, float64(total)/elapsed)

	// Clean up, untimed: drop the finalizers, then the children go with their owners.
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	err = parallel(*count, *workers, func(i int) error {
		_, err := apps.Patch(ctx, fmt.Sprintf("raw-%05d", i), types.MergePatchType, unfinalize, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return parallel(*count, *workers, func(i int) error {
		return apps.Delete(ctx, fmt.Sprintf("raw-%05d", i), metav1.DeleteOptions{})
	})
}

// children: the Deployment and Service appservice-operator makes for app (desired_state.cpp).
func children(app *unstructured.Unstructured) []*unstructured.Unstructured {
	name := app.GetName()
	labels := map[string]any{
		"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name,
		"app.kubernetes.io/managed-by": "appservice-operator", "app.example.com/appservice": name,
	}
	meta := func() map[string]any {
		return map[string]any{
			"name": name, "labels": labels,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "app.example.com/v1", "kind": "AppService", "name": name,
				"uid": string(app.GetUID()), "controller": true, "blockOwnerDeletion": true,
			}},
		}
	}
	selector := map[string]any{"app.example.com/appservice": name}
	deployment := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": selector},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "app", "image": "nginx:1.27",
					"ports": []any{map[string]any{"containerPort": int64(80), "protocol": "TCP"}},
				}}},
			},
		},
	}
	service := map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": meta(),
		"spec": map[string]any{
			"type": "ClusterIP", "selector": selector,
			"ports": []any{map[string]any{"protocol": "TCP", "port": int64(80), "targetPort": int64(80)}},
		},
	}
	return []*unstructured.Unstructured{{Object: deployment}, {Object: service}}
}
