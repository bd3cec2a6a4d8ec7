{{/* The spec of a pod that runs once: one container, never restarted, on the sandbox's nodes. */}}
{{- define "tested.podSpec" -}}
restartPolicy: Never
containers:
  - name: {{ .name }}
    image: "registry.local/{{ .name }}:{{ .tag }}"
{{- with .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
