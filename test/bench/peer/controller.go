// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	finalizer      = "app.example.com/cleanup"
	managedBy      = "appservice-operator"
	selectorLabel  = "app.example.com/appservice"
	containerName  = "app"
	conflictRetry  = 30 * time.Second
	typeAvailable  = "Available"
	typeProgressng = "Progressing"
	typeDegraded   = "Degraded"
)

// AppServiceReconciler keeps a Deployment and a Service per AppService, with the same desired
// shape as src/appservice/desired_state.cpp and the same conditions as conditions.cpp.
type AppServiceReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
}

func (r *AppServiceReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&AppService{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("appservice").
		Complete(r)
}

func labels(app *AppService) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       app.Name,
		"app.kubernetes.io/instance":   app.Name,
		"app.kubernetes.io/managed-by": managedBy,
		selectorLabel:                  app.Name,
	}
}

func size(app *AppService) int32 {
	if app.Spec.Size == nil {
		return 1
	}
	return *app.Spec.Size
}

func (r *AppServiceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	app := &AppService{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !app.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(app, finalizer) {
			return ctrl.Result{}, nil
		}
		if !controllerutil.ContainsFinalizer(app, metav1.FinalizerOrphanDependents) {
			policy := metav1.DeletePropagationBackground
			if controllerutil.ContainsFinalizer(app, metav1.FinalizerDeleteDependents) {
				policy = metav1.DeletePropagationForeground
			}
			for _, child := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
				if err := r.deleteOwned(ctx, app, child, policy); err != nil {
					return ctrl.Result{}, err
				}
			}
		}
		controllerutil.RemoveFinalizer(app, finalizer)
		if err := r.Update(ctx, app); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "CleanupComplete", "Cleanup",
			"Deleted the children of AppService %s/%s", app.Namespace, app.Name)
		log.Info("cleanup complete, finalizer removed")
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(app, finalizer) {
		controllerutil.AddFinalizer(app, finalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, app))
	}

	var issue, issueReason string
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.ensure(ctx, app, dep, func() error { return r.mutateDeployment(app, dep) }); err != nil {
		issue, issueReason = err.Error(), reasonOf(err)
	}
	var svc *corev1.Service
	if len(app.Spec.Ports) > 0 {
		svc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
		if err := r.ensure(ctx, app, svc, func() error { return r.mutateService(app, svc) }); err != nil && issue == "" {
			issue, issueReason = err.Error(), reasonOf(err)
		}
	} else if err := r.deleteOwned(ctx, app, &corev1.Service{}, metav1.DeletePropagationBackground); err != nil {
		return ctrl.Result{}, err
	}
	if dep.UID == "" {
		dep = nil
	}
	if svc != nil && svc.UID == "" {
		svc = nil
	}

	old := AppServiceStatus{}
	app.Status.DeepCopyInto(&old)
	computeStatus(app, dep, svc, len(app.Spec.Ports) > 0, issueReason, issue)
	if !equality.Semantic.DeepEqual(old, app.Status) {
		if err := r.Status().Update(ctx, app); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	switch issueReason {
	case "":
		return ctrl.Result{}, nil
	case "OwnershipConflict":
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	default:
		return ctrl.Result{}, errors.New(issue)
	}
}

type conflictError struct{ error }

func reasonOf(err error) string {
	var c conflictError
	if errors.As(err, &c) {
		return "OwnershipConflict"
	}
	return "ReconcileError"
}

// ensure is CreateOrUpdate plus an Event for each write; a child another controller owns is a
// conflict, never taken over.
func (r *AppServiceReconciler) ensure(ctx context.Context, app *AppService, obj client.Object, mutate controllerutil.MutateFn) error {
	kind := fmt.Sprintf("%T", obj)[len("*v1."):]
	what := fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, mutate)
	if err != nil {
		var owned *controllerutil.AlreadyOwnedError
		if errors.As(err, &owned) {
			msg := what + " exists and is not controlled by this AppService"
			r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, "OwnershipConflict", "Reconcile", msg)
			return conflictError{errors.New(msg)}
		}
		return fmt.Errorf("applying %s: %w", what, err)
	}
	switch op {
	case controllerutil.OperationResultCreated:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s", what)
	case controllerutil.OperationResultUpdated:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Updated", "Update", "Updated %s", what)
	}
	return nil
}

func (r *AppServiceReconciler) deleteOwned(ctx context.Context, app *AppService, obj client.Object, policy metav1.DeletionPropagation) error {
	if err := r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: app.Name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.UID != app.UID || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := obj.GetUID()
	err := r.Delete(ctx, obj, client.PropagationPolicy(policy), client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

func (r *AppServiceReconciler) mutateDeployment(app *AppService, dep *appsv1.Deployment) error {
	if dep.Labels == nil {
		dep.Labels = map[string]string{}
	}
	for k, v := range labels(app) {
		dep.Labels[k] = v
	}
	if err := controllerutil.SetControllerReference(app, dep, r.Scheme); err != nil {
		return err
	}
	replicas := size(app)
	dep.Spec.Replicas = &replicas
	if dep.CreationTimestamp.IsZero() { // the selector is immutable
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{selectorLabel: app.Name}}
	}
	dep.Spec.Template.Labels = labels(app)
	// Change our container in place so the fields the API server defaults stay as they are.
	var c *corev1.Container
	for i := range dep.Spec.Template.Spec.Containers {
		if dep.Spec.Template.Spec.Containers[i].Name == containerName {
			c = &dep.Spec.Template.Spec.Containers[i]
		}
	}
	if c == nil || len(dep.Spec.Template.Spec.Containers) != 1 {
		dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: containerName}}
		c = &dep.Spec.Template.Spec.Containers[0]
	}
	c.Image = app.Spec.Image
	c.Resources = app.Spec.Resources
	c.Env = app.Spec.Envs
	c.Ports = containerPorts(app)
	return nil
}

// One containerPort per distinct (targetPort, protocol); a named targetPort names a containerPort
// with the Service port's number.
func containerPorts(app *AppService) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	seen := map[string]bool{}
	for _, p := range app.Spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		cp := corev1.ContainerPort{ContainerPort: p.Port, Protocol: proto}
		switch {
		case p.TargetPort == nil:
		case p.TargetPort.Type == intstr.String:
			cp.Name = p.TargetPort.StrVal
		default:
			cp.ContainerPort = p.TargetPort.IntVal
		}
		key := fmt.Sprintf("%d/%s/%s", cp.ContainerPort, proto, cp.Name)
		if !seen[key] {
			seen[key] = true
			out = append(out, cp)
		}
	}
	return out
}

func (r *AppServiceReconciler) mutateService(app *AppService, svc *corev1.Service) error {
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	for k, v := range labels(app) {
		svc.Labels[k] = v
	}
	if err := controllerutil.SetControllerReference(app, svc, r.Scheme); err != nil {
		return err
	}
	svc.Spec.Type = app.Spec.ServiceType
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		for _, p := range app.Spec.Ports {
			if p.NodePort != 0 {
				svc.Spec.Type = corev1.ServiceTypeNodePort
			}
		}
	}
	svc.Spec.Selector = map[string]string{selectorLabel: app.Name}
	ports := make([]corev1.ServicePort, len(app.Spec.Ports))
	for i, p := range app.Spec.Ports {
		ports[i] = corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol,
			Port: p.Port, TargetPort: intstr.FromInt32(p.Port), NodePort: p.NodePort}
		if ports[i].Protocol == "" {
			ports[i].Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort != nil {
			ports[i].TargetPort = *p.TargetPort
		}
		// Keep a nodePort the API server allocated.
		for _, live := range svc.Spec.Ports {
			if ports[i].NodePort == 0 && svc.Spec.Type != corev1.ServiceTypeClusterIP &&
				live.Port == p.Port && live.Protocol == ports[i].Protocol {
				ports[i].NodePort = live.NodePort
			}
		}
	}
	svc.Spec.Ports = ports
	return nil
}

func condition(t string, ok bool, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message}
}

func deploymentCondition(dep *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range dep.Status.Conditions {
		if dep.Status.Conditions[i].Type == t {
			return &dep.Status.Conditions[i]
		}
	}
	return nil
}

// computeStatus mirrors src/appservice/conditions.cpp.
func computeStatus(app *AppService, dep *appsv1.Deployment, svc *corev1.Service, needsService bool, issueReason, issue string) {
	s := &app.Status
	want := size(app)
	s.ObservedGeneration = app.Generation
	s.Selector = selectorLabel + "=" + app.Name
	s.Replicas, s.ReadyReplicas, s.AvailableReplicas = 0, 0, 0
	if dep != nil {
		s.Replicas, s.ReadyReplicas, s.AvailableReplicas = dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas
	}
	availableMsg := fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want)

	var available, progressing metav1.Condition
	switch {
	case dep == nil:
		available = condition(typeAvailable, false, "DeploymentNotFound", "Deployment "+app.Name+" does not exist yet")
	case needsService && svc == nil:
		available = condition(typeAvailable, false, "ServiceNotFound", "Service "+app.Name+" does not exist yet")
	case want == 0:
		available = condition(typeAvailable, true, "ScaledToZero", "size is 0: no replicas are wanted")
	default:
		c := deploymentCondition(dep, appsv1.DeploymentAvailable)
		ok := c != nil && c.Status == corev1.ConditionTrue && s.AvailableReplicas >= want
		reason := "DeploymentUnavailable"
		if ok {
			reason = "MinimumReplicasAvailable"
		}
		available = condition(typeAvailable, ok, reason, availableMsg)
	}
	if dep == nil {
		progressing = condition(typeProgressng, true, "DeploymentCreating", "waiting for Deployment "+app.Name+" to be created")
	} else if c := deploymentCondition(dep, appsv1.DeploymentProgressing); c != nil && c.Status == corev1.ConditionFalse {
		reason := c.Reason
		if reason == "" {
			reason = "DeploymentStalled"
		}
		progressing = condition(typeProgressng, false, reason, c.Message)
	} else {
		done := dep.Status.ObservedGeneration >= dep.Generation && dep.Status.UpdatedReplicas == want &&
			s.Replicas == want && s.AvailableReplicas == want
		if done {
			progressing = condition(typeProgressng, false, "RolloutComplete",
				fmt.Sprintf("Deployment %s has %d updated, available replicas", app.Name, want))
		} else {
			progressing = condition(typeProgressng, true, "RollingOut",
				fmt.Sprintf("%d of %d replicas updated, %s", dep.Status.UpdatedReplicas, want, availableMsg))
		}
	}
	degraded := condition(typeDegraded, false, "AsExpected", "The owned children match the spec")
	if issueReason != "" {
		degraded = condition(typeDegraded, true, issueReason, issue)
	}
	for _, c := range []metav1.Condition{available, progressing, degraded} {
		c.ObservedGeneration = app.Generation
		meta.SetStatusCondition(&s.Conditions, c) // moves lastTransitionTime only on a flip
	}
}
