// SPDX-License-Identifier: Apache-2.0

package main

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// The AppService API (crds/app.example.com_appservices.yaml) as kubebuilder would generate it.
// The deep copies are written by hand (controller-gen would generate them).

var (
	GroupVersion  = schema.GroupVersion{Group: "app.example.com", Version: "v1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
)

type AppServiceSpec struct {
	Size        *int32                      `json:"size,omitempty"`
	Image       string                      `json:"image"`
	Resources   corev1.ResourceRequirements `json:"resources,omitempty"`
	Envs        []corev1.EnvVar             `json:"envs,omitempty"`
	Ports       []AppServicePort            `json:"ports,omitempty"`
	ServiceType corev1.ServiceType          `json:"serviceType,omitempty"`
}

// AppServicePort is core/v1 ServicePort with optional targetPort: corev1.ServicePort's
// IntOrString would serialize an unset targetPort as 0, which the CRD's schema refuses.
type AppServicePort struct {
	Name        string              `json:"name,omitempty"`
	Protocol    corev1.Protocol     `json:"protocol,omitempty"`
	AppProtocol *string             `json:"appProtocol,omitempty"`
	Port        int32               `json:"port"`
	TargetPort  *intstr.IntOrString `json:"targetPort,omitempty"`
	NodePort    int32               `json:"nodePort,omitempty"`
}

type AppServiceStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Replicas           int32              `json:"replicas,omitempty"`
	ReadyReplicas      int32              `json:"readyReplicas,omitempty"`
	AvailableReplicas  int32              `json:"availableReplicas,omitempty"`
	Selector           string             `json:"selector,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type AppService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AppServiceSpec   `json:"spec,omitempty"`
	Status            AppServiceStatus `json:"status,omitempty"`
}

type AppServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppService `json:"items"`
}

func init() { SchemeBuilder.Register(&AppService{}, &AppServiceList{}) }

func (in *AppServiceSpec) DeepCopyInto(out *AppServiceSpec) {
	*out = *in
	if in.Size != nil {
		size := *in.Size
		out.Size = &size
	}
	in.Resources.DeepCopyInto(&out.Resources)
	if in.Envs != nil {
		out.Envs = make([]corev1.EnvVar, len(in.Envs))
		for i := range in.Envs {
			in.Envs[i].DeepCopyInto(&out.Envs[i])
		}
	}
	if in.Ports != nil {
		out.Ports = make([]AppServicePort, len(in.Ports))
		for i, p := range in.Ports {
			out.Ports[i] = p
			if p.AppProtocol != nil {
				v := *p.AppProtocol
				out.Ports[i].AppProtocol = &v
			}
			if p.TargetPort != nil {
				v := *p.TargetPort
				out.Ports[i].TargetPort = &v
			}
		}
	}
}

func (in *AppServiceStatus) DeepCopyInto(out *AppServiceStatus) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

func (in *AppService) DeepCopyInto(out *AppService) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *AppService) DeepCopy() *AppService {
	if in == nil {
		return nil
	}
	out := new(AppService)
	in.DeepCopyInto(out)
	return out
}

func (in *AppService) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *AppServiceList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(AppServiceList)
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]AppService, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
