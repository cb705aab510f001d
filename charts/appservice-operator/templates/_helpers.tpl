{{/* The release's object names: the release name when it holds the chart's name. */}}
{{- define "asop.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "asop.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "asop.labels" -}}
{{ include "asop.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Combinations of values that render an operator that cannot run: refused, naming the values
to change (values.schema.json checks each value alone). Included by deployment.yaml. */}}
{{- define "asop.validate" -}}
{{- if and .Values.certManager.enabled (not .Values.metrics.secure) -}}
{{- fail "certManager.enabled=true with metrics.secure=false: the certificate is for HTTPS metrics (--metrics-cert-path), which the operator refuses without --metrics-secure. Set metrics.secure=true, or certManager.enabled=false." -}}
{{- end -}}
{{- if and (not .Values.leaderElection.enabled) (gt (int .Values.replicaCount) 1) -}}
{{- fail (printf "leaderElection.enabled=false with replicaCount=%d: every replica would reconcile the same AppServices at once. Set replicaCount=1, or leaderElection.enabled=true." (int .Values.replicaCount)) -}}
{{- end -}}
{{- if eq (int .Values.metrics.port) (int .Values.health.port) -}}
{{- fail (printf "metrics.port and health.port are both %d: the operator cannot serve both on one port. Set one of them to another port." (int .Values.metrics.port)) -}}
{{- end -}}
{{- end -}}
