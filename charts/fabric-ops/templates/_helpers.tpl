{{/* Names */}}
{{- define "fabric-ops.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fabric-ops.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fabric-ops.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fabric-ops.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fabric-ops.labels" -}}
helm.sh/chart: {{ include "fabric-ops.chart" . }}
{{ include "fabric-ops.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: {{ .Values.dialect }}-operations
app.kubernetes.io/part-of: hyperledger-fabric
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "fabric-ops.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The operations port: the value, or Fabric's default for the dialect. */}}
{{- define "fabric-ops.port" -}}
{{- if .Values.operations.port -}}
{{- .Values.operations.port -}}
{{- else if eq .Values.dialect "orderer" -}}
8443
{{- else -}}
9443
{{- end -}}
{{- end -}}

{{- define "fabric-ops.listenAddress" -}}
{{- if contains ":" .Values.operations.listenHost -}}
{{- printf "[%s]:%s" .Values.operations.listenHost (include "fabric-ops.port" .) -}}
{{- else -}}
{{- printf "%s:%s" .Values.operations.listenHost (include "fabric-ops.port" .) -}}
{{- end -}}
{{- end -}}

{{/* Service DNS names: <svc>, <svc>.<ns>, <svc>.<ns>.svc, <svc>.<ns>.svc.<domain>. */}}
{{- define "fabric-ops.serverName" -}}
{{- printf "%s.%s.svc" (include "fabric-ops.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "fabric-ops.configFileName" -}}
{{- if eq .Values.dialect "orderer" -}}orderer.yaml{{- else -}}core.yaml{{- end -}}
{{- end -}}

{{- define "fabric-ops.configMapName" -}}
{{- default (printf "%s-config" (include "fabric-ops.fullname" .)) .Values.config.existingConfigMap -}}
{{- end -}}

{{- define "fabric-ops.tlsEnabled" -}}
{{- if ne .Values.tls.provider "none" -}}true{{- end -}}
{{- end -}}

{{- define "fabric-ops.scheme" -}}
{{- if include "fabric-ops.tlsEnabled" . -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* Secrets: server pair, client-CA bundle (secret and key), client pair with the server's CA. */}}
{{- define "fabric-ops.serverSecret" -}}
{{- if eq .Values.tls.provider "certManager" -}}
{{- printf "%s-server-tls" (include "fabric-ops.fullname" .) -}}
{{- else -}}
{{- .Values.tls.existingSecrets.server -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.clientCASecret" -}}
{{- if eq .Values.tls.provider "certManager" -}}
{{- include "fabric-ops.serverSecret" . -}}
{{- else -}}
{{- .Values.tls.existingSecrets.clientCA -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.clientCAKey" -}}
{{- if eq .Values.tls.provider "certManager" -}}ca.crt{{- else -}}{{ .Values.tls.existingSecrets.clientCAKey }}{{- end -}}
{{- end -}}

{{- define "fabric-ops.clientSecret" -}}
{{- if eq .Values.tls.provider "certManager" -}}
{{- printf "%s-scraper-tls" (include "fabric-ops.fullname" .) -}}
{{- else -}}
{{- .Values.tls.existingSecrets.client -}}
{{- end -}}
{{- end -}}

{{/* Where the pod sees its files. */}}
{{- define "fabric-ops.configDir" -}}/etc/hyperledger/fabric{{- end -}}
{{- define "fabric-ops.serverTlsDir" -}}/etc/fabric-ops/tls/server{{- end -}}
{{- define "fabric-ops.clientCADir" -}}/etc/fabric-ops/tls/client-ca{{- end -}}

{{/* Container runtime check: type and endpoint, "none" unless the socket is mounted. */}}
{{- define "fabric-ops.runtimeType" -}}
{{- if not .Values.runtimeSocket.enabled -}}none{{- else if eq .Values.runtimeSocket.runtime "docker" -}}docker{{- else -}}cri{{- end -}}
{{- end -}}

{{- define "fabric-ops.runtimeSocketPath" -}}
{{- if .Values.runtimeSocket.path -}}
{{- .Values.runtimeSocket.path -}}
{{- else if eq .Values.runtimeSocket.runtime "docker" -}}/var/run/docker.sock
{{- else if eq .Values.runtimeSocket.runtime "crio" -}}/var/run/crio/crio.sock
{{- else -}}/run/containerd/containerd.sock
{{- end -}}
{{- end -}}

{{- define "fabric-ops.runtimeEndpoint" -}}
{{- if .Values.runtimeSocket.enabled -}}{{- printf "unix://%s" (include "fabric-ops.runtimeSocketPath" .) -}}{{- end -}}
{{- end -}}

{{/*
The settings that must match the pod (mounts, port, runtime socket), as a dict of the
dialect's key paths. Rendered into the ConfigMap and pinned by environment variables, so that
an existing ConfigMap cannot contradict the pod (or bring back vm.endpoint's Docker check).
*/}}
{{- define "fabric-ops.pinnedSettings" -}}
{{- $tls := include "fabric-ops.tlsEnabled" . -}}
{{- $cert := printf "%s/tls.crt" (include "fabric-ops.serverTlsDir" .) -}}
{{- $key := printf "%s/tls.key" (include "fabric-ops.serverTlsDir" .) -}}
{{- $clientCA := printf "%s/ca.crt" (include "fabric-ops.clientCADir" .) -}}
{{- $s := dict -}}
{{- if eq .Values.dialect "orderer" -}}
{{- $_ := set $s "Operations.ListenAddress" (include "fabric-ops.listenAddress" .) -}}
{{- $_ := set $s "Operations.TLS.Enabled" (ternary "true" "false" (eq $tls "true")) -}}
{{- if $tls -}}
{{- $_ := set $s "Operations.TLS.Certificate" $cert -}}
{{- $_ := set $s "Operations.TLS.PrivateKey" $key -}}
{{- $_ := set $s "Operations.TLS.ClientRootCAs" $clientCA -}}
{{- $_ := set $s "Operations.TLS.ClientAuthRequired" (toString .Values.tls.clientAuthRequired) -}}
{{- end -}}
{{- $_ := set $s "Operations.HealthCheck.ContainerRuntime.Type" (include "fabric-ops.runtimeType" .) -}}
{{- if .Values.runtimeSocket.enabled -}}
{{- $_ := set $s "Operations.HealthCheck.ContainerRuntime.Endpoint" (include "fabric-ops.runtimeEndpoint" .) -}}
{{- end -}}
{{- $_ := set $s "Operations.Kubernetes.Events.Enabled" (toString .Values.kubernetes.events.enabled) -}}
{{- $_ := set $s "Operations.Kubernetes.Events.CertificateExpiryWarningDays" (toString .Values.kubernetes.events.certificateExpiryWarningDays) -}}
{{- $_ := set $s "Operations.Kubernetes.LogspecConfigMap.Name" (include "fabric-ops.logspecConfigMapName" .) -}}
{{- else -}}
{{- $_ := set $s "operations.listenAddress" (include "fabric-ops.listenAddress" .) -}}
{{- $_ := set $s "operations.tls.enabled" (ternary "true" "false" (eq $tls "true")) -}}
{{- if $tls -}}
{{- $_ := set $s "operations.tls.cert.file" $cert -}}
{{- $_ := set $s "operations.tls.key.file" $key -}}
{{- $_ := set $s "operations.tls.clientRootCAs.files" $clientCA -}}
{{- $_ := set $s "operations.tls.clientAuthRequired" (toString .Values.tls.clientAuthRequired) -}}
{{- end -}}
{{- $_ := set $s "operations.healthCheck.containerRuntime.type" (include "fabric-ops.runtimeType" .) -}}
{{- if .Values.runtimeSocket.enabled -}}
{{- $_ := set $s "operations.healthCheck.containerRuntime.endpoint" (include "fabric-ops.runtimeEndpoint" .) -}}
{{- end -}}
{{- $_ := set $s "operations.kubernetes.events.enabled" (toString .Values.kubernetes.events.enabled) -}}
{{- $_ := set $s "operations.kubernetes.events.certificateExpiryWarningDays" (toString .Values.kubernetes.events.certificateExpiryWarningDays) -}}
{{- $_ := set $s "operations.kubernetes.logspecConfigMap.name" (include "fabric-ops.logspecConfigMapName" .) -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/* The Kubernetes integration (events, logspec ConfigMap): "true" when either is on. */}}
{{- define "fabric-ops.kubernetesApi" -}}
{{- if or .Values.kubernetes.events.enabled .Values.kubernetes.logspecConfigMap.enabled }}true{{ end -}}
{{- end -}}

{{/* Name of the logspec ConfigMap the chart creates; empty when the watch is off. */}}
{{- define "fabric-ops.logspecConfigMapName" -}}
{{- if .Values.kubernetes.logspecConfigMap.enabled }}{{ printf "%s-logspec" (include "fabric-ops.fullname" .) | trunc 63 | trimSuffix "-" }}{{ end -}}
{{- end -}}

{{/* Fabric's environment variable for a key path: CORE_ / ORDERER_ + the path upper-cased, "." as "_". */}}
{{- define "fabric-ops.envName" -}}
{{- printf "%s_%s" (ternary "ORDERER" "CORE" (eq .dialect "orderer")) (.key | upper | replace "." "_") -}}
{{- end -}}

{{/*
Render-time refusals: combinations that cannot work, with why and what to set instead.
Included by the Deployment, so every render runs it.
*/}}
{{- define "fabric-ops.validate" -}}
{{- if has .Values.operations.listenHost (list "127.0.0.1" "localhost" "::1") -}}
{{- fail (printf "operations.listenHost=%s is reachable only from inside the pod: the probes, the Service and Prometheus could not connect. Use 0.0.0.0 (or :: for IPv6)" .Values.operations.listenHost) -}}
{{- end -}}
{{- if and .Values.tls.clientAuthRequired .Values.probes.enabled (include "fabric-ops.tlsEnabled" .) -}}
{{- fail "tls.clientAuthRequired=true cannot be combined with probes.enabled=true: kubelet's HTTPS probes cannot present a client certificate, so every probe would fail the TLS handshake and the pod would restart forever. Keep tls.clientAuthRequired=false (/healthz and /version stay open, /logspec and /metrics still demand a client certificate), or set probes.enabled=false." -}}
{{- end -}}
{{- if eq .Values.tls.provider "existingSecrets" -}}
{{- range $key := list "server" "clientCA" "client" -}}
{{- if not (index $.Values.tls.existingSecrets $key) -}}
{{- fail (printf "tls.existingSecrets.%s is required with tls.provider=existingSecrets (server: the server pair; clientCA: the CA bundle trusted for client certificates; client: a client pair with ca.crt, for the ServiceMonitor and helm test)" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (include "fabric-ops.serviceMonitorRendered" .) (ne .Values.config.metrics.provider "prometheus") -}}
{{- fail (printf "serviceMonitor.enabled=true needs config.metrics.provider=prometheus (it is %q: /metrics would answer 404); set serviceMonitor.enabled=false or the provider to prometheus" .Values.config.metrics.provider) -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to null)" -}}
{{- end -}}
{{- $managed := list "FABRIC_CFG_PATH" "FABRIC_LOGGING_SPEC" "FABRIC_LOGGING_FORMAT" -}}
{{- range $key := list "operations.listenAddress" "operations.tls.enabled" "operations.tls.cert.file" "operations.tls.key.file" "operations.tls.clientRootCAs.files" "operations.tls.clientAuthRequired" "operations.healthCheck.containerRuntime.type" "operations.healthCheck.containerRuntime.endpoint" "vm.endpoint" -}}
{{- $managed = append $managed (include "fabric-ops.envName" (dict "dialect" "peer" "key" $key)) -}}
{{- end -}}
{{- range $key := list "Operations.ListenAddress" "Operations.TLS.Enabled" "Operations.TLS.Certificate" "Operations.TLS.PrivateKey" "Operations.TLS.ClientRootCAs" "Operations.TLS.ClientAuthRequired" "Operations.HealthCheck.ContainerRuntime.Type" "Operations.HealthCheck.ContainerRuntime.Endpoint" -}}
{{- $managed = append $managed (include "fabric-ops.envName" (dict "dialect" "orderer" "key" $key)) -}}
{{- end -}}
{{- range $name, $_ := .Values.env -}}
{{- if has $name $managed -}}
{{- fail (printf "env.%s is set by the chart (it must match the pod's mounts, port and runtime socket); use the chart's values instead: operations.*, tls.*, runtimeSocket.*, logging.*" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.monitoringApi" -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" -}}true{{- end -}}
{{- end -}}

{{- define "fabric-ops.serviceMonitorRendered" -}}
{{- if and .Values.serviceMonitor.enabled (or .Values.serviceMonitor.force (include "fabric-ops.monitoringApi" .)) -}}true{{- end -}}
{{- end -}}

{{- define "fabric-ops.prometheusRuleRendered" -}}
{{- if and .Values.prometheusRule.enabled (or .Values.prometheusRule.force (include "fabric-ops.monitoringApi" .)) -}}true{{- end -}}
{{- end -}}
