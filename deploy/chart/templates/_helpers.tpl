{{/* <release>-armada-temporal, or the release name when it already holds the chart's name; 52 characters at most so suffixes fit. */}}
{{- define "armada.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "armada.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: include "armada.selectorLabels" (list . "worker") */}}
{{- define "armada.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ $root.Chart.Name }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* The ServiceAccount of one component: include "armada.serviceAccountName" (list . "worker") */}}
{{- define "armada.serviceAccountName" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $override := get $root.Values.serviceAccount (printf "%sName" $component) -}}
{{- if $override -}}
{{- $override -}}
{{- else if $root.Values.serviceAccount.create -}}
{{- printf "%s-%s" (include "armada.fullname" $root) $component -}}
{{- else -}}
default
{{- end -}}
{{- end -}}

{{- define "armada.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Secret holding the payload encryption keys: the operator's own, or the chart's. */}}
{{- define "armada.encryptionSecret" -}}
{{- .Values.encryption.existingSecret | default (printf "%s-encryption" (include "armada.fullname" .)) -}}
{{- end -}}

{{/* Where the worker and the bridge find the encryption keys (ARMADA_ENCRYPTION_KEYS_FILE). */}}
{{- define "armada.encryptionDir" -}}
/etc/armada/encryption
{{- end -}}

{{/* The volume mount of the encryption keys, for a container's volumeMounts; empty when off. */}}
{{- define "armada.encryptionMount" -}}
{{- if .Values.encryption.enabled -}}
- name: encryption-keys
  mountPath: {{ include "armada.encryptionDir" . }}
  readOnly: true
{{- end -}}
{{- end -}}

{{/* The volume of the encryption keys, for a pod's volumes; empty when off. */}}
{{- define "armada.encryptionVolume" -}}
{{- if .Values.encryption.enabled -}}
- name: encryption-keys
  secret:
    secretName: {{ include "armada.encryptionSecret" . }}
    items:
      - key: {{ required "encryption.secretKey must name the key of the Secret that holds the keys" .Values.encryption.secretKey }}
        path: keys
{{- end -}}
{{- end -}}

{{/* The Secret holding the release digest key: the operator's own, or the chart's. */}}
{{- define "armada.digestKeySecret" -}}
{{- .Values.digestKey.existingSecret | default (printf "%s-digest-key" (include "armada.fullname" .)) -}}
{{- end -}}

{{/* Where the worker finds the release digest key (ARMADA_DIGEST_KEY_FILE). */}}
{{- define "armada.digestKeyDir" -}}
/etc/armada/digest-key
{{- end -}}

{{/* The Secret holding the bridge's steering key: the operator's own, or the chart's. */}}
{{- define "armada.steeringSecret" -}}
{{- .Values.steering.existingSecret | default (printf "%s-steering" (include "armada.fullname" .)) -}}
{{- end -}}

{{/* The environment both processes share: how to reach Temporal and seal what they send it. */}}
{{- define "armada.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: ARMADA_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- with .Values.temporal.uiUrl }}
- name: ARMADA_TEMPORAL_UI
  value: {{ . | quote }}
{{- end }}
{{- if .Values.encryption.enabled }}
- name: ARMADA_ENCRYPTION_KEYS_FILE
  value: {{ include "armada.encryptionDir" . }}/keys
{{- end }}
{{- end -}}
