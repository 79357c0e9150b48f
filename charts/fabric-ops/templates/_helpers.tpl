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

{{/* The port of the server: in companion mode the sidecar's, else the value or Fabric's default for the dialect. */}}
{{- define "fabric-ops.port" -}}
{{- if .Values.companion.enabled -}}
{{- .Values.companion.port -}}
{{- else if .Values.operations.port -}}
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
{{- if .Values.kubernetes.logspecConfigMap.enabled -}}
{{- $_ := set $s "Operations.Kubernetes.LogspecConfigMap.Name" (include "fabric-ops.logspecConfigMapName" .) -}}
{{- end -}}
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
{{- if .Values.kubernetes.logspecConfigMap.enabled -}}
{{- $_ := set $s "operations.kubernetes.logspecConfigMap.name" (include "fabric-ops.logspecConfigMapName" .) -}}
{{- end -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/*
The Kubernetes API in use (events, the logspec ConfigMap, fleet discovery or the fleet's put-back
ConfigMap): "true" when any is on. It brings the ServiceAccount, its token and the downward-API
environment; what each part may do is in the Roles (src/kubernetes/access.ts, by feature).
*/}}
{{- define "fabric-ops.kubernetesApi" -}}
{{- if or .Values.kubernetes.events.enabled .Values.kubernetes.logspecConfigMap.enabled (include "fabric-ops.fleetKubernetes" .) }}true{{ end -}}
{{- end -}}

{{/* The Role in the release's namespace (events, the logspec ConfigMap, the put-back ConfigMap): "true" when it has a rule. */}}
{{- define "fabric-ops.ownRole" -}}
{{- if or .Values.kubernetes.events.enabled .Values.kubernetes.logspecConfigMap.enabled (include "fabric-ops.fleetStateConfigMap" .) }}true{{ end -}}
{{- end -}}

{{/* Whether the chart creates the ServiceAccount: serviceAccount.create, or (null) when the Kubernetes integration needs one. */}}
{{- define "fabric-ops.serviceAccountCreate" -}}
{{- if .Values.companion.enabled -}}
{{- /* The pod is the node's, with the node's account (serviceAccount.name). */ -}}
{{- else if kindIs "invalid" .Values.serviceAccount.create -}}
{{- include "fabric-ops.kubernetesApi" . -}}
{{- else if .Values.serviceAccount.create -}}true{{- end -}}
{{- end -}}

{{/* The pods' ServiceAccount; empty: the namespace's default (no serviceAccountName). */}}
{{- define "fabric-ops.serviceAccountName" -}}
{{- if include "fabric-ops.serviceAccountCreate" . -}}
{{- default (include "fabric-ops.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- .Values.serviceAccount.name -}}
{{- end -}}
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
{{- include "fabric-ops.validateCompanion" . -}}
{{- include "fabric-ops.validateFleet" . -}}
{{- range $name, $value := .Values.env -}}
{{- if not (kindIs "string" $value) -}}
{{- fail (printf "env.%s=%v is a %s, but environment values are strings: use --set-string env.%s=%v (not --set), or quote it in a values file (%s: \"%v\")" $name $value (ternary "boolean" "number" (kindIs "bool" $value)) $name $value $name $value) -}}
{{- end -}}
{{- end -}}
{{- range $key := list "nameOverride" "fullnameOverride" -}}
{{- $value := index $.Values $key -}}
{{- $pattern := ternary `^[a-z]([-a-z0-9]*[a-z0-9])?$` `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$` (eq $key "fullnameOverride") -}}
{{- if and $value (not (regexMatch $pattern $value)) -}}
{{- fail (printf "%s=%q is not a DNS label, so the objects named from it would be invalid: use lower-case letters, digits and '-', starting with a %s and ending with a letter or digit, at most 63 characters (e.g. peer0-ops)" $key $value (ternary "letter (it names the Service)" "letter or digit" (eq $key "fullnameOverride"))) -}}
{{- end -}}
{{- end -}}
{{- include "fabric-ops.validateLogSpec" (dict "key" "logging.spec" "spec" .Values.logging.spec) -}}
{{- if .Values.kubernetes.logspecConfigMap.enabled -}}
{{- include "fabric-ops.validateLogSpec" (dict "key" "kubernetes.logspecConfigMap.initialSpec" "spec" .Values.kubernetes.logspecConfigMap.initialSpec) -}}
{{- end -}}
{{- if and .Values.tls.clientAuthRequired (not (include "fabric-ops.tlsEnabled" .)) -}}
{{- fail "tls.clientAuthRequired=true needs TLS, but tls.provider=none serves plain HTTP, where no client certificate can be asked for (the setting would be silently dropped and every endpoint left open). Set tls.provider=certManager or existingSecrets, or tls.clientAuthRequired=false" -}}
{{- end -}}
{{- /* Only the readiness probe asks /healthz, which runs the checkers; startup and liveness ask /version. The sidecar has no readiness probe. */ -}}
{{- if and .Values.probes.enabled (not .Values.config.existingConfigMap) (not .Values.companion.enabled) -}}
{{- $timeoutMs := float64 (include "fabric-ops.durationMs" .Values.config.healthCheck.timeout) -}}
{{- $seconds := .Values.probes.readiness.timeoutSeconds -}}
{{- if ge $timeoutMs (float64 (mul $seconds 1000)) -}}
{{- fail (printf "config.healthCheck.timeout=%s is not below probes.readiness.timeoutSeconds=%v: a health check that runs into its timeout answers /healthz after kubelet has given up, so the readiness probe fails and the pod leaves the Service. Set config.healthCheck.timeout below %vs (the default: 2s against 3) or raise probes.readiness.timeoutSeconds" $.Values.config.healthCheck.timeout $seconds $seconds) -}}
{{- end -}}
{{- end -}}
{{- if eq .Values.tls.provider "certManager" -}}
{{- $cm := .Values.tls.certManager -}}
{{- if ge (float64 (include "fabric-ops.durationMs" $cm.renewBefore)) (float64 (include "fabric-ops.durationMs" $cm.duration)) -}}
{{- fail (printf "tls.certManager.renewBefore=%s is not shorter than tls.certManager.duration=%s: cert-manager refuses such a Certificate (a certificate cannot be renewed before it is issued). Set renewBefore below duration (the defaults: duration 2160h, renewBefore 720h)" $cm.renewBefore $cm.duration) -}}
{{- end -}}
{{- end -}}
{{- /* The schema allows only these two; this is for renders that skip it (--skip-schema-validation), with the reason. */ -}}
{{- $host := toString .Values.operations.listenHost -}}
{{- if not (has $host (list "0.0.0.0" "::")) -}}
{{- $why := "is not an address the chart can bind in a pod: the pod's own IP is not known when the chart renders, and an address the pod does not have cannot be bound (the service would exit at start and the pod crash-loop)" -}}
{{- if regexMatch `^(127\.|::1$|0*:0*:0*:0*:0*:0*:0*:0*1$|::ffff:127\.|localhost$)` (lower $host) -}}
{{- $why = "is a loopback address, reachable only from inside the pod: kubelet's probes, the Service and Prometheus could not connect, so the pod would never be ready and would restart forever" -}}
{{- else if regexMatch `^[^:]*:[0-9]+$|^\[.*\]:[0-9]+$` $host -}}
{{- $why = "carries a port: listenHost is the address only (the port is operations.port), or the listen address would be rendered as [host:port]:port, which the service refuses at start" -}}
{{- end -}}
{{- fail (printf "operations.listenHost=%s %s. Use 0.0.0.0 (every IPv4 address of the pod) or :: (IPv6 and dual-stack: IPv4 too)" $host $why) -}}
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
{{- $providerVar := include "fabric-ops.metricsProviderVar" . -}}
{{- $monitorWhy := include "fabric-ops.serviceMonitorWhy" . -}}
{{- if and (include "fabric-ops.serviceMonitorRendered" .) (ne (include "fabric-ops.metricsProvider" .) "prometheus") -}}
{{- range .Values.extraEnv -}}
{{- if eq .name $providerVar -}}
{{- fail (printf "%s needs the prometheus metrics provider, but extraEnv sets %s=%q, which overrides config.metrics.provider (/metrics would answer 404); drop it and set config.metrics.provider instead, or set serviceMonitor.enabled=false" $monitorWhy $providerVar (include "fabric-ops.metricsProvider" $)) -}}
{{- end -}}
{{- end -}}
{{- if hasKey .Values.env $providerVar -}}
{{- fail (printf "%s needs the prometheus metrics provider, but env.%s=%q overrides config.metrics.provider (/metrics would answer 404); drop env.%s and set config.metrics.provider instead, or set serviceMonitor.enabled=false" $monitorWhy $providerVar (index .Values.env $providerVar) $providerVar) -}}
{{- end -}}
{{- fail (printf "%s needs config.metrics.provider=prometheus (it is %q: /metrics would answer 404); set serviceMonitor.enabled=false or the provider to prometheus" $monitorWhy .Values.config.metrics.provider) -}}
{{- end -}}
{{- /* Asked for explicitly but not rendered: say so instead of leaving it out (helm template shows no NOTES). */ -}}
{{- if and (kindIs "bool" .Values.serviceMonitor.enabled) .Values.serviceMonitor.enabled (not (include "fabric-ops.serviceMonitorRendered" .)) -}}
{{- fail "serviceMonitor.enabled=true, but the cluster does not serve monitoring.coreos.com/v1 (the prometheus-operator CRDs are not installed), so no ServiceMonitor would be created and nothing would scrape this release. Install prometheus-operator or its CRDs first; with helm template, which sees no cluster, pass --api-versions monitoring.coreos.com/v1; to create it anyway set serviceMonitor.force=true; or leave serviceMonitor.enabled unset (null: a ServiceMonitor only where the API is served) or set it to false" -}}
{{- end -}}
{{- if and .Values.prometheusRule.enabled (not (include "fabric-ops.prometheusRuleRendered" .)) -}}
{{- fail "prometheusRule.enabled=true, but the cluster does not serve monitoring.coreos.com/v1 (the prometheus-operator CRDs are not installed), so no PrometheusRule would be created and no alert would fire. Install prometheus-operator or its CRDs first; with helm template, which sees no cluster, pass --api-versions monitoring.coreos.com/v1; to create it anyway set prometheusRule.force=true; or set prometheusRule.enabled=false" -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to null)" -}}
{{- end -}}
{{- $managed := list "FABRIC_CFG_PATH" "FABRIC_LOGGING_SPEC" "FABRIC_LOGGING_FORMAT" -}}
{{- if .Values.companion.enabled -}}
{{- /* In companion mode operations.* and Operations.* are the node's (the node's overrides are welcome); the companion's own settings are pinned. */ -}}
{{- range $dialect := list "peer" "orderer" -}}
{{- range $_, $key := fromYaml (include "fabric-ops.companionKeys" $dialect) -}}
{{- $managed = append $managed (include "fabric-ops.envName" (dict "dialect" $dialect "key" $key)) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- range $key := list "operations.listenAddress" "operations.tls.enabled" "operations.tls.cert.file" "operations.tls.key.file" "operations.tls.clientRootCAs.files" "operations.tls.clientAuthRequired" "operations.healthCheck.containerRuntime.type" "operations.healthCheck.containerRuntime.endpoint" "vm.endpoint" -}}
{{- $managed = append $managed (include "fabric-ops.envName" (dict "dialect" "peer" "key" $key)) -}}
{{- end -}}
{{- range $key := list "Operations.ListenAddress" "Operations.TLS.Enabled" "Operations.TLS.Certificate" "Operations.TLS.PrivateKey" "Operations.TLS.ClientRootCAs" "Operations.TLS.ClientAuthRequired" "Operations.HealthCheck.ContainerRuntime.Type" "Operations.HealthCheck.ContainerRuntime.Endpoint" -}}
{{- $managed = append $managed (include "fabric-ops.envName" (dict "dialect" "orderer" "key" $key)) -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := .Values.env -}}
{{- if has $name $managed -}}
{{- fail (printf "env.%s is set by the chart (it must match the pod's mounts, port and runtime socket); use the chart's values instead: %s" $name (ternary "companion.*, operations.listenHost, tls.*, config.*, kubernetes.*, logging.*" "operations.*, tls.*, runtimeSocket.*, logging.*" .Values.companion.enabled)) -}}
{{- end -}}
{{- end -}}
{{- if include "fabric-ops.kubernetesApi" . -}}
{{- $managed = concat $managed (list "POD_NAME" "POD_NAMESPACE" "POD_UID" "NODE_NAME") -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $i, $var := .Values.extraEnv -}}
{{- if has $var.name $managed -}}
{{- fail (printf "extraEnv[%d].name=%s is set by the chart (it must match the pod's mounts, port, runtime socket and downward API); use the chart's values instead: operations.*, tls.*, runtimeSocket.*, logging.*, kubernetes.*" $i $var.name) -}}
{{- end -}}
{{- if or (hasKey $.Values.env $var.name) (hasKey $seen $var.name) -}}
{{- fail (printf "extraEnv[%d].name=%s is already set (%s): give each variable once, in env or extraEnv" $i $var.name (ternary "in env" "earlier in extraEnv" (hasKey $.Values.env $var.name))) -}}
{{- end -}}
{{- $_ := set $seen $var.name true -}}
{{- end -}}
{{- $volumes := list "config" "tls-server" "tls-client-ca" "runtime-socket" "fleet-config" "fleet-state" -}}
{{- range $i, $volume := .Values.extraVolumes -}}
{{- if hasPrefix "fleet-group-" $volume.name -}}
{{- fail (printf "extraVolumes[%d].name=%s is taken: names starting fleet-group- are the chart's (fleet groups' Secrets); choose another name" $i $volume.name) -}}
{{- end -}}
{{- if hasPrefix "fabric-ops-" $volume.name -}}
{{- fail (printf "extraVolumes[%d].name=%s is taken: names starting fabric-ops- are the chart's (the companion's volumes in the node's pod); choose another name" $i $volume.name) -}}
{{- end -}}
{{- if has $volume.name $volumes -}}
{{- fail (printf "extraVolumes[%d].name=%s is taken: the chart's volumes are %s; choose another name" $i $volume.name (join ", " (list "config" "tls-server" "tls-client-ca" "runtime-socket" "fleet-config" "fleet-state"))) -}}
{{- end -}}
{{- $volumes = append $volumes $volume.name -}}
{{- end -}}
{{- $paths := list (include "fabric-ops.configDir" .) -}}
{{- if include "fabric-ops.tlsEnabled" . -}}{{- $paths = concat $paths (list (include "fabric-ops.serverTlsDir" .) (include "fabric-ops.clientCADir" .)) -}}{{- end -}}
{{- if .Values.runtimeSocket.enabled -}}{{- $paths = append $paths (include "fabric-ops.runtimeSocketPath" .) -}}{{- end -}}
{{- if .Values.fleet.enabled -}}{{- $paths = concat $paths (list (include "fabric-ops.fleetConfigDir" .) (include "fabric-ops.fleetGroupsDir" .) (include "fabric-ops.fleetStateMount" .)) -}}{{- end -}}
{{- if .Values.companion.enabled -}}
{{- $paths = append (without $paths (include "fabric-ops.configDir" .)) (include "fabric-ops.companionStateMount" .) -}}
{{- range $i, $mount := .Values.companion.volumeMounts -}}
{{- if has (trimSuffix "/" $mount.mountPath) $paths -}}
{{- fail (printf "companion.volumeMounts[%d].mountPath=%s is where the chart mounts the sidecar's own files (%s); choose another path" $i $mount.mountPath (join ", " $paths)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $i, $mount := .Values.extraVolumeMounts -}}
{{- if has (trimSuffix "/" $mount.mountPath) $paths -}}
{{- fail (printf "extraVolumeMounts[%d].mountPath=%s is where the chart mounts its own files (%s); choose another path" $i $mount.mountPath (join ", " $paths)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.companion.enabled (include "fabric-ops.kubernetesApi" .) (not .Values.serviceAccount.name) -}}
{{- fail "kubernetes.events.enabled / kubernetes.logspecConfigMap.enabled in companion mode need the node pod's ServiceAccount, which the Role is bound to (the sidecar runs with the node pod's account and token), but serviceAccount.name is empty: set it to the account the node's pod runs as (kubectl get pod <node pod> -o jsonpath='{.spec.serviceAccountName}')" -}}
{{- end -}}
{{- if and (include "fabric-ops.kubernetesApi" .) (not (include "fabric-ops.serviceAccountName" .)) -}}
{{- fail "kubernetes.events.enabled / kubernetes.logspecConfigMap.enabled / fleet.discovery.kubernetes / fleet.stateConfigMap need a ServiceAccount to bind the Role to, but serviceAccount.create=false and serviceAccount.name is empty: set serviceAccount.name to an existing account, or serviceAccount.create=true (or null)" -}}
{{- end -}}
{{- end -}}

{{/*
A Fabric logging specification, checked as the service parses it (src/logging/spec.ts and
levels.ts): segments split on ":", each empty, a level, or <logger>[,<logger>...]=<level>; levels in
all-lower or all-upper case only; logger names are [A-Za-z0-9_#-] words joined by single dots, with
an optional trailing "." (that logger only). The service exits 2 on anything else.
*/}}
{{- define "fabric-ops.validateLogSpec" -}}
{{- $level := `^(payload|debug|info|warn|warning|error|dpanic|panic|fatal|notice|critical|PAYLOAD|DEBUG|INFO|WARN|WARNING|ERROR|DPANIC|PANIC|FATAL|NOTICE|CRITICAL)$` -}}
{{- $loggerName := `^[A-Za-z0-9_#-]+(\.[A-Za-z0-9_#-]+)*\.?$` -}}
{{- $allowed := "levels are payload, debug, info, warn, warning, error, dpanic, panic, fatal, notice, critical, each all lower-case or all upper-case; the form is [<logger>[,<logger>...]=]<level>[:...], e.g. info or health=debug:info" -}}
{{- range $segment := splitList ":" .spec -}}
{{- $parts := splitList "=" $segment -}}
{{- $problem := "" -}}
{{- if eq (len $parts) 1 -}}
{{- if and (ne $segment "") (not (regexMatch $level $segment)) -}}{{- $problem = printf "bad segment '%s'" $segment -}}{{- end -}}
{{- else if eq (len $parts) 2 -}}
{{- $names := index $parts 0 -}}
{{- if eq $names "" -}}
{{- $problem = printf "no logger specified in segment '%s'" $segment -}}
{{- else if not (regexMatch $level (index $parts 1)) -}}
{{- $problem = printf "bad segment '%s'" $segment -}}
{{- else -}}
{{- range $name := splitList "," $names -}}
{{- if and (not $problem) (not (regexMatch $loggerName $name)) -}}{{- $problem = printf "bad logger name '%s'" $name -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $problem = printf "bad segment '%s'" $segment -}}
{{- end -}}
{{- if $problem -}}
{{- fail (printf "%s=%q is not a logging specification the service accepts (%s; it would exit at start): %s" $.key $.spec $problem $allowed) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A Go duration (the schema checked its syntax) in milliseconds, as a float. */}}
{{- define "fabric-ops.durationMs" -}}
{{- $perUnit := dict "ns" 0.000001 "us" 0.001 "µs" 0.001 "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0 -}}
{{- $total := 0.0 -}}
{{- range $part := regexFindAll `[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h)` . -1 -}}
{{- $number := regexFind `^[0-9]+(\.[0-9]+)?` $part -}}
{{- $total = addf $total (mulf (float64 $number) (get $perUnit (trimPrefix $number $part))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* The variable that overrides the metrics provider (CORE_METRICS_PROVIDER, ORDERER_METRICS_PROVIDER). */}}
{{- define "fabric-ops.metricsProviderVar" -}}
{{- if .Values.companion.enabled -}}
{{- include "fabric-ops.envName" (dict "dialect" .Values.dialect "key" (ternary "Operations.Companion.MetricsProvider" "operations.companion.metricsProvider" (eq .Values.dialect "orderer"))) -}}
{{- else -}}
{{- include "fabric-ops.envName" (dict "dialect" .Values.dialect "key" (ternary "Metrics.Provider" "metrics.provider" (eq .Values.dialect "orderer"))) -}}
{{- end -}}
{{- end -}}

{{/* The provider the service will use: env's variable wins over the file, as in Fabric. */}}
{{- define "fabric-ops.metricsProvider" -}}
{{- $var := include "fabric-ops.metricsProviderVar" . -}}
{{- $provider := .Values.config.metrics.provider -}}
{{- if hasKey .Values.env $var -}}{{- $provider = index .Values.env $var -}}{{- end -}}
{{- range .Values.extraEnv -}}{{- if and (eq .name $var) (hasKey . "value") -}}{{- $provider = .value -}}{{- end -}}{{- end -}}
{{- $provider -}}
{{- end -}}

{{- define "fabric-ops.monitoringApi" -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" -}}true{{- end -}}
{{- end -}}

{{/* serviceMonitor.enabled: null (or unset) creates it where the API is served (or forced), true the same but refuses to render without it (fabric-ops.validate), false never. */}}
{{- define "fabric-ops.serviceMonitorRendered" -}}
{{- $enabled := .Values.serviceMonitor.enabled -}}
{{- if and (or (kindIs "invalid" $enabled) $enabled) (or .Values.serviceMonitor.force (include "fabric-ops.monitoringApi" .)) -}}true{{- end -}}
{{- end -}}

{{/* What asked for the ServiceMonitor, for messages. */}}
{{- define "fabric-ops.serviceMonitorWhy" -}}
{{- if and (kindIs "bool" .Values.serviceMonitor.enabled) .Values.serviceMonitor.enabled -}}serviceMonitor.enabled=true
{{- else if .Values.serviceMonitor.force -}}serviceMonitor.force=true
{{- else -}}a ServiceMonitor (serviceMonitor.enabled=null, the default, creates one because the cluster serves monitoring.coreos.com/v1)
{{- end -}}
{{- end -}}

{{- define "fabric-ops.prometheusRuleRendered" -}}
{{- if and .Values.prometheusRule.enabled (or .Values.prometheusRule.force (include "fabric-ops.monitoringApi" .)) -}}true{{- end -}}
{{- end -}}

{{/* Fleet mode (docs/fleet.md): where the pod sees the fleet configuration, the groups' Secrets and the state. */}}
{{- define "fabric-ops.fleetConfigDir" -}}/etc/fabric-ops/fleet{{- end -}}
{{- define "fabric-ops.fleetGroupsDir" -}}/etc/fabric-ops/fleet-groups{{- end -}}
{{/*
The fleet's state volume is mounted at fleetStateMount; the state directory is a folder fabric-ops
makes in it (0700): the root of an emptyDir or a PVC is world-writable (2777 with fsGroup), and the
put-back store refuses a state folder others can write (a planted put-back would run with the
fleet's credentials).
*/}}
{{- define "fabric-ops.fleetStateMount" -}}/var/lib/fabric-ops/fleet{{- end -}}
{{- define "fabric-ops.fleetStateDir" -}}/var/lib/fabric-ops/fleet/state{{- end -}}
{{- define "fabric-ops.fleetConfigMapName" -}}{{- printf "%s-fleet" (include "fabric-ops.fullname" .) | trunc 63 | trimSuffix "-" -}}{{- end -}}
{{- define "fabric-ops.fleetStateClaim" -}}
{{- default (printf "%s-fleet-state" (include "fabric-ops.fullname" .) | trunc 63 | trimSuffix "-") .Values.fleet.persistence.existingClaim -}}
{{- end -}}

{{/* Fleet mode with Kubernetes discovery sources: "true". */}}
{{- define "fabric-ops.fleetDiscovery" -}}
{{- if and .Values.fleet.enabled .Values.fleet.discovery.kubernetes }}true{{ end -}}
{{- end -}}

{{/*
The put-back ConfigMap's name, empty when off: fleet.stateConfigMap.enabled, or (null) exactly
when there is a discovery source, since the pod then holds a token and talks to the API anyway;
static fleets stay without token and Role unless it is asked for.
*/}}
{{- define "fabric-ops.fleetStateConfigMap" -}}
{{- $state := .Values.fleet.stateConfigMap -}}
{{- if .Values.fleet.enabled -}}
{{- if ternary (include "fabric-ops.fleetDiscovery" .) $state.enabled (kindIs "invalid" $state.enabled) -}}
{{- default (printf "%s-fleet-state" (include "fabric-ops.fullname" .)) $state.name -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Fleet mode needs the Kubernetes API (src/fleet/index.ts fleetNeedsKubernetes): "true". */}}
{{- define "fabric-ops.fleetKubernetes" -}}
{{- if or (include "fabric-ops.fleetDiscovery" .) (include "fabric-ops.fleetStateConfigMap" .) }}true{{ end -}}
{{- end -}}

{{/*
What discovery lists and watches, as YAML: `cluster`, the resources of the sources with namespace
`*` (a ClusterRole); `namespaces`, each other namespace (default: the release's) with the
resources of its sources that the ClusterRole does not already grant. Exactly the kinds used.
*/}}
{{- define "fabric-ops.fleetDiscoveryAccess" -}}
{{- $byNamespace := dict -}}
{{- if include "fabric-ops.fleetDiscovery" . -}}
{{- range $source := .Values.fleet.discovery.kubernetes -}}
{{- $namespace := default $.Release.Namespace $source.namespace -}}
{{- $resource := ternary "services" "pods" (eq $source.kind "Service") -}}
{{- $resources := default (list) (get $byNamespace $namespace) -}}
{{- if not (has $resource $resources) -}}
{{- $_ := set $byNamespace $namespace (append $resources $resource | sortAlpha) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $cluster := default (list) (get $byNamespace "*") -}}
{{- $namespaces := dict -}}
{{- range $namespace, $resources := $byNamespace -}}
{{- if ne $namespace "*" -}}
{{- $left := list -}}
{{- range $resource := $resources -}}{{- if not (has $resource $cluster) -}}{{- $left = append $left $resource -}}{{- end -}}{{- end -}}
{{- if $left -}}{{- $_ := set $namespaces $namespace $left -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "cluster" $cluster "namespaces" $namespaces) -}}
{{- end -}}

{{/* The discovery Roles' (and ClusterRole's) name: the release's namespace in it, since the Roles also live in other namespaces. */}}
{{- define "fabric-ops.fleetDiscoveryRoleName" -}}
{{- printf "%s-%s-fleet-discovery" .Release.Namespace (include "fabric-ops.fullname" .) -}}
{{- end -}}

{{/*
The fleet configuration file (src/fleet/config.ts reads it): the values, with each group's
files at its mounts and the state directory on the fleet-state volume.
*/}}
{{- define "fabric-ops.fleetConfig" -}}
{{- $f := .Values.fleet -}}
{{- $groupsDir := include "fabric-ops.fleetGroupsDir" . -}}
{{- $groups := dict -}}
{{- range $name, $group := $f.groups -}}
{{- $_ := set $groups $name (dict "tls" (dict "certFile" (printf "%s/%s/client/tls.crt" $groupsDir $name) "keyFile" (printf "%s/%s/client/tls.key" $groupsDir $name) "caFiles" (list (printf "%s/%s/ca/ca.crt" $groupsDir $name)))) -}}
{{- end -}}
{{- $healthy := ternary (dict "minShare" $f.healthy.minShare) (dict "minCount" $f.healthy.minCount) (kindIs "invalid" $f.healthy.minCount) -}}
{{- $config := dict "stateDirectory" (include "fabric-ops.fleetStateDir" .) "nodeTimeout" $f.nodeTimeout "concurrency" $f.concurrency "maxResponseBytes" $f.maxResponseBytes "pollInterval" $f.pollInterval "minRoundInterval" $f.minRoundInterval "healthy" $healthy "writers" $f.writers "groups" $groups "nodes" $f.nodes -}}
{{- /* Only when used, so a static fleet's file (and its checksum/fleet) stays as it was. */ -}}
{{- with include "fabric-ops.fleetStateConfigMap" . -}}
{{- $_ := set $config "stateConfigMap" . -}}
{{- end -}}
{{- if $f.discovery.kubernetes -}}
{{- $sources := list -}}
{{- range $source := $f.discovery.kubernetes -}}
{{- $sources = append $sources (merge (dict "namespace" (default $.Release.Namespace $source.namespace)) (deepCopy $source)) -}}
{{- end -}}
{{- $_ := set $config "discovery" (dict "kubernetes" $sources) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Fleet refusals: what the service would refuse at start, said at render time with the value to change. */}}
{{- define "fabric-ops.validateFleet" -}}
{{- if .Values.fleet.enabled -}}
{{- if not (include "fabric-ops.tlsEnabled" .) -}}
{{- fail "fleet.enabled=true needs TLS and client CAs on the server, but tls.provider=none serves plain HTTP: the /fleet endpoints reveal the topology and change log levels on every node, and they demand a client certificate from a trusted CA. Set tls.provider=certManager (the chart's CA signs the clients) or existingSecrets (with tls.existingSecrets.clientCA)" -}}
{{- end -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- fail (printf "fleet.enabled=true needs replicaCount=1 (it is %v): each pod would own its own TTL put-backs, so a DELETE /fleet/logspec or a GET reaching another pod would not see them" .Values.replicaCount) -}}
{{- end -}}
{{- if and (not .Values.fleet.nodes) (not .Values.fleet.discovery.kubernetes) -}}
{{- fail "fleet.enabled=true needs nodes, but fleet.nodes and fleet.discovery.kubernetes are both empty: list nodes in fleet.nodes (name, url, group), or add a discovery source to fleet.discovery.kubernetes (kind Service or Pod, selector, port, group)" -}}
{{- end -}}
{{- range $i, $source := .Values.fleet.discovery.kubernetes -}}
{{- $at := printf "fleet.discovery.kubernetes[%d]" $i -}}
{{- if not (hasKey $.Values.fleet.groups $source.group) -}}
{{- fail (printf "%s.group=%s is not a key of fleet.groups (groups: %s)" $at $source.group (default "none" (join ", " (keys $.Values.fleet.groups | sortAlpha)))) -}}
{{- end -}}
{{- if and (eq $source.kind "Pod") $source.address -}}
{{- fail (printf "%s.address=%s is for Services: a Pod (kind Pod) is reached at its IP (status.podIP); drop address, or use kind Service" $at $source.address) -}}
{{- end -}}
{{- if and (eq (default "https" $source.scheme) "http") $source.tlsServerName -}}
{{- fail (printf "%s.tlsServerName=%s needs scheme https, but scheme is http (no TLS): drop tlsServerName, or set scheme https" $at $source.tlsServerName) -}}
{{- end -}}
{{- end -}}
{{- with include "fabric-ops.fleetStateConfigMap" . -}}
{{- $chartOwn := list (include "fabric-ops.configMapName" $) (include "fabric-ops.fleetConfigMapName" $) (printf "%s-logspec" (include "fabric-ops.fullname" $) | trunc 63 | trimSuffix "-") -}}
{{- if has . $chartOwn -}}
{{- fail (printf "fleet.stateConfigMap.name=%s is a ConfigMap of this release (%s): the service would write its put-backs over it. Choose another name, or leave it empty (%s-fleet-state)" . (join ", " $chartOwn) (include "fabric-ops.fullname" $)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.fleet.stateConfigMap.name (not (include "fabric-ops.fleetStateConfigMap" .)) -}}
{{- fail (printf "fleet.stateConfigMap.name=%s is set but the put-back ConfigMap is off (fleet.stateConfigMap.enabled=%v%s): set fleet.stateConfigMap.enabled=true, or drop the name" .Values.fleet.stateConfigMap.name .Values.fleet.stateConfigMap.enabled (ternary ", and null means on only with fleet.discovery.kubernetes" "" (kindIs "invalid" .Values.fleet.stateConfigMap.enabled))) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $i, $node := .Values.fleet.nodes -}}
{{- if hasKey $seen $node.name -}}
{{- fail (printf "fleet.nodes[%d].name=%s is used by an earlier node; names must be unique" $i $node.name) -}}
{{- end -}}
{{- $_ := set $seen $node.name true -}}
{{- if not (hasKey $.Values.fleet.groups $node.group) -}}
{{- fail (printf "fleet.nodes[%d].group=%s is not a key of fleet.groups (groups: %s)" $i $node.group (default "none" (join ", " (keys $.Values.fleet.groups | sortAlpha)))) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.fleet.persistence.existingClaim (not .Values.fleet.persistence.enabled) -}}
{{- fail (printf "fleet.persistence.existingClaim=%s is set but fleet.persistence.enabled=false, so the state would be on an emptyDir: set fleet.persistence.enabled=true, or drop existingClaim" .Values.fleet.persistence.existingClaim) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Companion mode (docs/kubernetes-companion.md): fabric-ops as a sidecar in the node's pod. Where the
sidecar sees its own files; the node's are where companion.volumeMounts put them.
*/}}
{{- define "fabric-ops.companionStateMount" -}}/var/lib/fabric-ops/companion{{- end -}}
{{- define "fabric-ops.companionStateDir" -}}/var/lib/fabric-ops/companion/state{{- end -}}
{{- define "fabric-ops.companionPortName" -}}fabric-ops{{- end -}}
{{- define "fabric-ops.companionConfigMapName" -}}{{- printf "%s-companion" (include "fabric-ops.fullname" .) | trunc 63 | trimSuffix "-" -}}{{- end -}}

{{/*
The companion's own settings, pinned by environment variables (the node's file is the node's: only
these keys, fabric-ops' own, are set for the sidecar), as a dict of the dialect's key paths.
*/}}
{{- define "fabric-ops.companionKeys" -}}
{{- if eq . "orderer" -}}
{{- toYaml (dict "enabled" "Operations.Companion.Enabled" "listen" "Operations.Companion.ListenAddress" "provider" "Operations.Companion.MetricsProvider" "tls" "Operations.Companion.TLS.Enabled" "cert" "Operations.Companion.TLS.Certificate" "key" "Operations.Companion.TLS.PrivateKey" "clientCAs" "Operations.Companion.TLS.ClientRootCAs" "clientAuth" "Operations.Companion.TLS.ClientAuthRequired" "state" "Operations.Companion.LogSpec.StateDirectory" "timeout" "Operations.HealthCheck.Timeout" "runtime" "Operations.HealthCheck.ContainerRuntime.Type" "events" "Operations.Kubernetes.Events.Enabled" "expiry" "Operations.Kubernetes.Events.CertificateExpiryWarningDays" "logspec" "Operations.Kubernetes.LogspecConfigMap.Name") -}}
{{- else -}}
{{- toYaml (dict "enabled" "operations.companion.enabled" "listen" "operations.companion.listenAddress" "provider" "operations.companion.metricsProvider" "tls" "operations.companion.tls.enabled" "cert" "operations.companion.tls.cert.file" "key" "operations.companion.tls.key.file" "clientCAs" "operations.companion.tls.clientRootCAs.files" "clientAuth" "operations.companion.tls.clientAuthRequired" "state" "operations.companion.logspec.stateDirectory" "timeout" "operations.healthCheck.timeout" "runtime" "operations.healthCheck.containerRuntime.type" "events" "operations.kubernetes.events.enabled" "expiry" "operations.kubernetes.events.certificateExpiryWarningDays" "logspec" "operations.kubernetes.logspecConfigMap.name") -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.companionPinnedSettings" -}}
{{- $tls := include "fabric-ops.tlsEnabled" . -}}
{{- $cert := printf "%s/tls.crt" (include "fabric-ops.serverTlsDir" .) -}}
{{- $key := printf "%s/tls.key" (include "fabric-ops.serverTlsDir" .) -}}
{{- $clientCA := printf "%s/ca.crt" (include "fabric-ops.clientCADir" .) -}}
{{- $s := dict -}}
{{- $k := fromYaml (include "fabric-ops.companionKeys" .Values.dialect) -}}
{{- $_ := set $s $k.enabled "true" -}}
{{- $_ := set $s $k.listen (include "fabric-ops.listenAddress" .) -}}
{{- $_ := set $s $k.provider .Values.config.metrics.provider -}}
{{- $_ := set $s $k.tls (ternary "true" "false" (eq $tls "true")) -}}
{{- if $tls -}}
{{- $_ := set $s $k.cert $cert -}}
{{- $_ := set $s $k.key $key -}}
{{- $_ := set $s $k.clientCAs $clientCA -}}
{{- $_ := set $s $k.clientAuth (toString .Values.tls.clientAuthRequired) -}}
{{- end -}}
{{- $_ := set $s $k.state (include "fabric-ops.companionStateDir" .) -}}
{{- $_ := set $s $k.timeout .Values.config.healthCheck.timeout -}}
{{- /* The node's vm.endpoint (often in its environment) would register a Docker check that fails forever in the sidecar. */ -}}
{{- $_ := set $s $k.runtime "none" -}}
{{- $_ := set $s $k.events (toString .Values.kubernetes.events.enabled) -}}
{{- $_ := set $s $k.expiry (toString .Values.kubernetes.events.certificateExpiryWarningDays) -}}
{{- if .Values.kubernetes.logspecConfigMap.enabled -}}
{{- $_ := set $s $k.logspec (include "fabric-ops.logspecConfigMapName" .) -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/* The sidecar's securityContext: containerSecurityContext, with podSecurityContext's runAsUser and runAsGroup (the pod's own context is the node's). */}}
{{- define "fabric-ops.companionSecurityContext" -}}
{{- $context := deepCopy (default (dict) .Values.containerSecurityContext) -}}
{{- range $field := list "runAsUser" "runAsGroup" -}}
{{- $value := index (default (dict) $.Values.podSecurityContext) $field -}}
{{- if and (not (kindIs "invalid" $value)) (not (hasKey $context $field)) -}}
{{- $_ := set $context $field $value -}}
{{- end -}}
{{- end -}}
{{- toYaml $context -}}
{{- end -}}

{{/* The sidecar container (one Kubernetes Container, as YAML). */}}
{{- define "fabric-ops.companionContainer" -}}
{{- $scheme := include "fabric-ops.scheme" . -}}
name: fabric-ops
image: {{ include "fabric-ops.image" . | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
args:
  - --config
  - {{ .Values.companion.configFile | quote }}
  - --dialect
  - {{ .Values.dialect }}
{{- with .Values.companion.envFrom }}
# The node's environment, so that the sidecar reads the node's file as the node does.
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
env:
  - name: FABRIC_CFG_PATH
    value: {{ dir .Values.companion.configFile | quote }}
  # fabric-ops' own loggers (the node's spec is the node's, read and set through /logspec).
  - name: FABRIC_LOGGING_SPEC
    value: {{ .Values.logging.spec | quote }}
  {{- if eq .Values.logging.format "json" }}
  - name: FABRIC_LOGGING_FORMAT
    value: json
  {{- end }}
  {{- if include "fabric-ops.kubernetesApi" . }}
  {{- range $name, $field := dict "POD_NAME" "metadata.name" "POD_NAMESPACE" "metadata.namespace" "POD_UID" "metadata.uid" "NODE_NAME" "spec.nodeName" }}
  - name: {{ $name }}
    valueFrom:
      fieldRef:
        fieldPath: {{ $field }}
  {{- end }}
  {{- end }}
  {{- range $key, $value := fromYaml (include "fabric-ops.companionPinnedSettings" .) }}
  - name: {{ include "fabric-ops.envName" (dict "dialect" $.Values.dialect "key" $key) }}
    value: {{ $value | quote }}
  {{- end }}
  {{- range $name, $value := .Values.env }}
  - name: {{ $name }}
    value: {{ $value | quote }}
  {{- end }}
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
ports:
  - name: {{ include "fabric-ops.companionPortName" . }}
    containerPort: {{ include "fabric-ops.port" . }}
    protocol: TCP
{{- if .Values.probes.enabled }}
# Whether the process answers (/version): never /healthz, which fails while the node is down or a
# certificate file is missing (a restart cannot fix either). No readiness probe: a sidecar's
# readiness is the pod's, and would take the node out of the node's own Services.
{{- range $kind := list "startup" "liveness" }}
{{- $probe := index $.Values.probes $kind }}
{{ $kind }}Probe:
  httpGet:
    path: /version
    port: {{ include "fabric-ops.companionPortName" $ }}
    scheme: {{ $scheme }}
  periodSeconds: {{ $probe.periodSeconds }}
  timeoutSeconds: {{ $probe.timeoutSeconds }}
  failureThreshold: {{ $probe.failureThreshold }}
{{- end }}
{{- end }}
securityContext:
  {{- include "fabric-ops.companionSecurityContext" . | nindent 2 }}
resources:
  {{- toYaml .Values.resources | nindent 2 }}
volumeMounts:
  {{- if include "fabric-ops.tlsEnabled" . }}
  - name: fabric-ops-tls-server
    mountPath: {{ include "fabric-ops.serverTlsDir" . }}
    readOnly: true
  - name: fabric-ops-tls-client-ca
    mountPath: {{ include "fabric-ops.clientCADir" . }}
    readOnly: true
  {{- end }}
  # Pending put-backs of TTL writes to the node's /logspec (the state folder is made in it, 0700).
  - name: fabric-ops-state
    mountPath: {{ include "fabric-ops.companionStateMount" . }}
  # The node's files, read-only: its configuration, certificates (never its keys) and data volume.
  {{- range .Values.companion.volumeMounts }}
  - name: {{ .name }}
    mountPath: {{ .mountPath }}
    {{- with .subPath }}
    subPath: {{ . }}
    {{- end }}
    readOnly: true
  {{- end }}
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The volumes the patch adds to the node's pod (a YAML list). */}}
{{- define "fabric-ops.companionVolumes" -}}
{{- if include "fabric-ops.tlsEnabled" . }}
# Whole-directory mounts: kubelet swaps the ..data symlink on rotation, fabric-ops reloads the files.
- name: fabric-ops-tls-server
  secret:
    secretName: {{ include "fabric-ops.serverSecret" . }}
    defaultMode: 292 # 0444: the node's pod, not the chart, chooses the user and groups
    items:
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
- name: fabric-ops-tls-client-ca
  secret:
    secretName: {{ include "fabric-ops.clientCASecret" . }}
    defaultMode: 292 # 0444
    items:
      - key: {{ include "fabric-ops.clientCAKey" . }}
        path: ca.crt
{{- end }}
- name: fabric-ops-state
  emptyDir:
    sizeLimit: 16Mi
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The strategic-merge patch of the node's workload: the sidecar and its volumes (containers and volumes merge by name). */}}
{{- define "fabric-ops.companionPatch" -}}
apiVersion: apps/v1
kind: {{ .Values.companion.workload.kind }}
metadata:
  name: {{ .Values.companion.workload.name }}
  namespace: {{ .Release.Namespace }}
spec:
  template:
    spec:
      containers:
        - {{- include "fabric-ops.companionContainer" . | nindent 10 }}
      volumes:
        {{- include "fabric-ops.companionVolumes" . | nindent 8 }}
{{- end -}}

{{/* Companion-mode refusals: what cannot work beside another chart's pod, with why and what to set instead. */}}
{{- define "fabric-ops.validateCompanion" -}}
{{- $c := .Values.companion -}}
{{- if $c.enabled -}}
{{- $refused := dict -}}
{{- if .Values.fleet.enabled -}}{{- $_ := set $refused "fleet.enabled" "a fleet is its own Deployment, not a sidecar of one node: install it as a separate release" -}}{{- end -}}
{{- if .Values.runtimeSocket.enabled -}}{{- $_ := set $refused "runtimeSocket.enabled" "the sidecar checks the node's health through the node's own /healthz, and a hostPath socket in the node's pod would take it out of the baseline and restricted Pod Security levels" -}}{{- end -}}
{{- if .Values.networkPolicy.enabled -}}{{- $_ := set $refused "networkPolicy.enabled" "a NetworkPolicy selecting the node's pods would deny every other ingress to the node, its gRPC ports included" -}}{{- end -}}
{{- if .Values.podDisruptionBudget.enabled -}}{{- $_ := set $refused "podDisruptionBudget.enabled" "a PodDisruptionBudget selecting the node's pods would govern the node's evictions" -}}{{- end -}}
{{- range $key, $why := $refused -}}
{{- fail (printf "%s=true cannot be combined with companion.enabled=true: %s. Set %s=false" $key $why $key) -}}
{{- end -}}
{{- if $.Values.config.existingConfigMap -}}
{{- fail (printf "config.existingConfigMap=%s cannot be combined with companion.enabled=true: the sidecar reads the node's own file (companion.configFile on companion.volumeMounts), and the chart renders no ConfigMap of its own. Drop config.existingConfigMap" $.Values.config.existingConfigMap) -}}
{{- end -}}
{{- if and (kindIs "bool" $.Values.serviceAccount.create) $.Values.serviceAccount.create -}}
{{- fail "serviceAccount.create=true cannot be combined with companion.enabled=true: the sidecar runs in the node's pod, with the node pod's ServiceAccount. Set serviceAccount.create=null (or false) and serviceAccount.name to the node pod's account" -}}
{{- end -}}
{{- if not $c.workload.name -}}
{{- fail "companion.enabled=true needs companion.workload.name: the node's Deployment or StatefulSet that the sidecar patch is for (e.g. org1-peer0-hlf-peer, or the FabricPeer's or IBPPeer's name with hlf-operator or fabric-operator)" -}}
{{- end -}}
{{- if not $c.workload.podLabels -}}
{{- fail "companion.enabled=true needs companion.workload.podLabels: the labels of the node's pods, which the Service on the sidecar's port selects (kubectl get pod <node pod> --show-labels; e.g. app=hlf-peer and release=org1-peer0)" -}}
{{- end -}}
{{- if not $c.configFile -}}
{{- fail (printf "companion.enabled=true needs companion.configFile: the path of the node's %s in the sidecar, on one of companion.volumeMounts (the node's ConfigMap volume)" (include "fabric-ops.configFileName" $)) -}}
{{- end -}}
{{- $under := "" -}}
{{- $mountPaths := list -}}
{{- range $mount := concat $c.volumeMounts $.Values.extraVolumeMounts -}}
{{- $mountPaths = append $mountPaths $mount.mountPath -}}
{{- if hasPrefix (printf "%s/" (trimSuffix "/" $mount.mountPath)) $c.configFile -}}{{- $under = $mount.mountPath -}}{{- end -}}
{{- end -}}
{{- if not $under -}}
{{- fail (printf "companion.configFile=%s is on none of companion.volumeMounts (mount paths: %s): the sidecar would exit at start (the file does not exist in its container). Mount the node's configuration volume at the file's folder" $c.configFile (default "none" (join ", " $mountPaths))) -}}
{{- end -}}
{{- if eq (int $c.port) (int (include "fabric-ops.nodeDefaultPort" $)) -}}
{{- fail (printf "companion.port=%v is the %s's own operations port (Fabric's default): the sidecar shares the node's network namespace, so one of the two could not listen. Keep 9449" $c.port $.Values.dialect) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fabric-ops.nodeDefaultPort" -}}{{- if eq .Values.dialect "orderer" -}}8443{{- else -}}9443{{- end -}}{{- end -}}
